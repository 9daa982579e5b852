import AFProxyTransport
import NIOCore

extension SessionAffinity {
    /// The affinity of the transfers whose client is served on `eventLoop`.
    package init(_ eventLoop: any EventLoop) {
        self.init(key: ObjectIdentifier(eventLoop))
    }
}

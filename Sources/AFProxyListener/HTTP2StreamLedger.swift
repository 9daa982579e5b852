#if Interception
import AFProxyModel
import NIOCore
import NIOHTTP2

/// Between NIO's HTTP/2 connection handler and the connection's lifetime handler
/// (`NIOHTTP2ServerConnectionManagementHandler`, which counts open streams to know when the
/// connection is idle): passes on a stream's close only when its opening was passed on. NIO
/// tells a stream's opening once its first frame has been handed to the stream channel; a
/// stream that closes while handling that frame (a head the codec rejects, so the connection
/// handler resets it at once) is told closed first, and its opening never. The lifetime handler
/// asserts on such a close (a crash in a debug build) and would miscount without the assert.
final class HTTP2StreamLedger: NIOHTTP2StreamDelegate {
    private let next: any NIOHTTP2StreamDelegate
    private let open = Locked(Set<HTTP2StreamID>())

    init(passingTo next: any NIOHTTP2StreamDelegate) {
        self.next = next
    }

    func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
        self.open.withLock { _ = $0.insert(id) }
        self.next.streamCreated(id, channel: channel)
    }

    func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
        guard self.open.withLock({ $0.remove(id) }) != nil else { return }
        self.next.streamClosed(id, channel: channel)
    }
}
#endif

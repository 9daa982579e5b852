import AFProxyModel
import NIOCore

/// The listener's open HTTP/2 client connections (intercepted clients that chose `h2`), so that
/// a graceful stop can tell each to wind down: `ChannelShouldQuiesceEvent`, which their
/// connection handler answers with GOAWAY, letting the streams under way finish while no new
/// one starts. HTTP/1 connections need no word: they end with their last exchange, or with the
/// daemon's grace period.
final class HTTP2Connections: Sendable {
    private let open = Locked([ObjectIdentifier: any Channel]())

    init() {}

    /// Kept until it closes.
    func add(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        self.open.withLock { $0[key] = channel }
        channel.closeFuture.whenComplete { _ in self.open.withLock { $0[key] = nil } }
    }

    var count: Int { self.open.withLock { $0.count } }

    /// From any thread: each connection hears it on its own event loop.
    func quiesce() {
        for channel in self.open.withLock({ Array($0.values) }) {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }
}

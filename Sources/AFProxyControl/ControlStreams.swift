import AFProxyModel
import NIOCore

/// The control connections that stream (`GET /v1/events`, `GET /v1/live`), so that a graceful
/// stop can end each with the last chunk (`0\r\n\r\n`) before the event loops go away: a reader
/// then tells a daemon that stopped cleanly from one that died or a connection that broke (a
/// truncated chunked body). Connections that answer one request at a time are not listed: they
/// end on their own.
final class ControlStreams: Sendable {
    private let state = Locked<(channels: [ObjectIdentifier: any Channel], ended: Bool)>(([:], false))

    /// `channel` now streams, until it closes; false once `endAll` ran (a stream started on a
    /// connection that was already open): the caller ends it at once.
    func add(_ channel: any Channel) -> Bool {
        let key = ObjectIdentifier(channel)
        guard
            self.state.withLock({ state in
                if !state.ended { state.channels[key] = channel }
                return !state.ended
            })
        else { return false }
        channel.closeFuture.whenComplete { [state] _ in
            _ = state.withLock { $0.channels.removeValue(forKey: key) }
        }
        return true
    }

    /// Ends every stream with its last chunk and closes it. A reader that stopped reading cannot
    /// take even that: after `limit` its connection is closed as it is.
    func endAll(within limit: TimeAmount) async {
        let open = self.state.withLock { state in
            state.ended = true
            return Array(state.channels.values)
        }
        for channel in open {
            channel.pipeline.fireUserInboundEventTriggered(ControlStreamEnd())
            channel.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
        }
        for channel in open {
            try? await channel.closeFuture.get()
        }
    }
}

/// Sent through a streaming connection's pipeline by `ControlStreams.endAll`: write the last
/// chunk, then close.
struct ControlStreamEnd: Sendable {}

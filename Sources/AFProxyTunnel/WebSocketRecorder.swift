import AFProxyModel
import FoundationEssentials
import NIOCore

/// What a record rule keeps of a WebSocket stream task: both directions' messages in one bounded
/// `WebSocketMessageLog`, which the control API reads from any thread while the relay adds to it.
/// Each side of the relay reads its own direction with its own `WebSocketFrameReader`, on the
/// event loop, from the very buffers it passes on (`TunnelGlue.forward`): nothing is copied but
/// the payload bytes kept, and nothing waits for the reading. The reading is bounded by the
/// bytes that pass (a few operations a byte of a frame's header, a copy of what is kept), so it
/// never falls behind the relay; it takes the log's lock once a chunk that completed messages.
package final class WebSocketRecorder: Sendable {
    /// The record rule that named the task.
    package let rule: Int
    /// Whether the payloads of each direction are kept (the rule's `request` / `response` sides);
    /// the messages of a direction not kept are listed all the same, their payloads null.
    private let sent: Bool
    private let received: Bool
    private let log: Locked<WebSocketMessageLog>

    /// `limit`: the rule's `max`, the payload bytes kept a message (`WebSocketMessageLog.limit`).
    package init(rule: Int, limit: Int64, sent: Bool, received: Bool) {
        self.rule = rule
        self.sent = sent
        self.received = received
        self.log = Locked(WebSocketMessageLog(limit: limit))
    }

    /// The messages kept so far.
    package var messages: WebSocketMessageLog { self.log.withLock { $0 } }

    /// A reader of the bytes `side` sends: the client's are sent messages, the origin's received
    /// ones behind its `101` answer head.
    func reader(for side: TunnelLifecycle.Side) -> WebSocketFrameReader {
        let limit = self.log.withLock { $0.limit }
        return side == .client
            ? WebSocketFrameReader(direction: .sent, limit: self.sent ? limit : 0)
            : WebSocketFrameReader(direction: .received, limit: self.received ? limit : 0, skipsHTTPHead: true)
    }

    /// Messages a reader completed.
    func keep(_ messages: [WebSocketMessage]) {
        self.log.withLock { log in
            for var message in messages {
                if !(message.direction == .sent ? self.sent : self.received) { message.payload = nil }
                log.append(message)
            }
        }
    }
}

/// The WebSocket messages a record rule kept of one stream task, bounded both ways whatever the
/// connection carries: the latest `messageLimit` records and at most `payloadBudget` payload bytes
/// together; older messages go first (`dropped` counts them), so the list is always the latest.
///
/// Why in memory rather than in the body store's files: messages are many and mostly small, and
/// a file per message would cost what a recorded body costs (a file created and closed, about
/// 130 µs on bench/record) for every chat line; one file a task would need offsets into a file
/// `record-max-total` may remove. So the payloads stay here, bounded per task by the rule's own
/// `max` (sixteen messages of it, at most 16 MiB), and the manager keeps the logs of a bounded
/// number of tasks (`WebSocketMessageBook`).
package struct WebSocketMessageLog: Sendable, Equatable {
    package static let messageLimit = 1000
    /// The most payload bytes a task keeps together, whatever its rule's `max`.
    package static let largestBudget = 16 << 20

    /// Payload bytes kept a message: the rule's `max`, within the budget.
    package let limit: Int
    package let payloadBudget: Int
    private var items: [WebSocketMessage] = []
    /// Where the kept messages start in `items`: older ones are dropped by moving it, and the
    /// array compacted now and then, so a full log takes a new message in constant time.
    private var first = 0
    /// Messages let go to keep the bounds.
    package private(set) var dropped = 0
    package private(set) var payloadBytes = 0

    /// `limit`: the rule's `max` per message.
    package init(limit: Int64) {
        self.payloadBudget = Int(min(Int64(Self.largestBudget), max(0, limit) &* 16))
        self.limit = min(Int(clamping: max(0, limit)), self.payloadBudget)
    }

    package var messages: ArraySlice<WebSocketMessage> { self.items[self.first...] }

    package var count: Int { self.items.count - self.first }

    package mutating func append(_ message: WebSocketMessage) {
        var message = message
        if let payload = message.payload, payload.count > self.limit {
            message.payload = Array(payload.prefix(self.limit))
            message.cut = true
        }
        let kept = message.payload?.count ?? 0
        while self.count > 0 && (self.count >= Self.messageLimit || self.payloadBytes + kept > self.payloadBudget) {
            self.payloadBytes -= self.items[self.first].payload?.count ?? 0
            self.items[self.first].payload = nil
            self.first += 1
            self.dropped += 1
        }
        self.items.append(message)
        self.payloadBytes += kept
        if self.first >= 64 && self.first * 2 >= self.items.count {
            self.items.removeFirst(self.first)
            self.first = 0
        }
    }
}

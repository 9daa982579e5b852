import AFProxyModel

/// What a `GET /v1/live` reader has been sent, so that the next snapshot carries only what
/// changed. Advanced only when a snapshot is really written: a reader that could not take one
/// gets everything since its last in the next, so nothing it shows goes stale.
package struct LiveChanges: Sendable {
    private var sent: [Int: TaskRecord] = [:]
    private var ticksSinceSent = 0
    /// Nothing was sent yet: the first line goes at once even with no live task, as a reader waits
    /// for it to draw its (empty) list.
    private var sentOnce = false
    /// A line at least this often (in ticks) even when no task changed, for the totals and
    /// rates that move with completions alone.
    package let heartbeat: Int

    package init(heartbeat: Int = 4) {
        self.heartbeat = heartbeat
    }

    /// The live tasks to send now, or nil when there is nothing worth a line: no task new,
    /// changed or gone, no completion, and the heartbeat not due.
    package mutating func next(live records: [TaskRecord], completions: Int) -> (tasks: [TaskRecord], live: [Int])? {
        self.ticksSinceSent += 1
        let changed = records.filter { self.sent[$0.id] != $0 }
        let gone = self.sent.count + changed.count(where: { self.sent[$0.id] == nil }) != records.count
        guard !self.sentOnce || !changed.isEmpty || gone || completions > 0 || self.ticksSinceSent >= self.heartbeat
        else {
            return nil
        }
        return (changed, records.map(\.id))
    }

    /// The snapshot made of `records` went out.
    package mutating func sent(_ records: [TaskRecord]) {
        self.sent = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        self.ticksSinceSent = 0
        self.sentOnce = true
    }
}

/// Tasks completed since the last snapshot, as the event bus reports them: the newest `limit`
/// records and a count of the rest, so a burst of short requests costs a reader a fixed amount.
package struct LiveCompletions: Sendable {
    package static let limit = 100

    package private(set) var records: [TaskRecord] = []
    package private(set) var notShown = 0

    package init() {}

    package var count: Int { self.records.count + self.notShown }

    package mutating func append(_ record: TaskRecord) {
        if self.records.count == Self.limit {
            self.records.removeFirst()
            self.notShown += 1
        }
        self.records.append(record)
    }

    package mutating func take() -> (records: [TaskRecord], notShown: Int) {
        defer { self = LiveCompletions() }
        return (self.records, self.notShown)
    }
}

import AFProxyModel

/// One rule's allowance in one direction: tokens (bytes) accrue at `rate` up to `capacity`, and
/// moving bytes spends them. It may go into debt: what curl or a socket hands over in one
/// piece is taken whole, and the next piece waits until the debt is repaid, so the average
/// holds over any stretch longer than a few pieces, whatever their size.
///
/// It starts empty, so a transfer starts at the rate rather than with a burst, and its
/// capacity (a tenth of a second at the rate, at least `minimumCapacity`) bounds the burst after
/// a pause: a transfer that waited on its client does not then run at many times the rate.
///
/// Fairness: tasks that share the bucket (a host or the global rule) and were refused queue up
/// in `waiters`, and the next bytes go to the first of them: the one that refilled tokens first
/// is not always the same, so none starves. A waiter that stops asking (its transfer was
/// suspended or ended without a word) is dropped after `staleAfter`.
package struct TokenBucket: Sendable {
    package static let minimumCapacity: Double = 65536
    package static let staleAfter: Duration = .seconds(1)

    package private(set) var rate: Int64
    package private(set) var tokens: Double = 0
    private var last: ContinuousClock.Instant
    /// Task ids refused so far, first come first served, with when each last asked.
    package private(set) var waiters: [Int] = []
    private var lastAsked: [Int: ContinuousClock.Instant] = [:]

    package init(rate: Int64, now: ContinuousClock.Instant) {
        self.rate = rate
        self.last = now
    }

    package var capacity: Double { max(Double(self.rate) / 10, Self.minimumCapacity) }

    package mutating func refill(now: ContinuousClock.Instant) {
        guard now > self.last else { return }
        let elapsed = now - self.last
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        self.tokens = min(self.capacity, self.tokens + seconds * Double(self.rate))
        self.last = now
    }

    /// A rule changed its rate: what accrued so far accrued at the old one.
    package mutating func setRate(_ rate: Int64, now: ContinuousClock.Instant) {
        self.refill(now: now)
        self.rate = rate
        self.tokens = min(self.tokens, self.capacity)
    }

    /// How long until `need` bytes (at most the capacity) are there; nil: they are.
    package func wait(for need: Int) -> Duration? {
        let need = min(Double(need), self.capacity)
        guard self.tokens < need else { return nil }
        return .nanoseconds(Int64(((need - self.tokens) / Double(self.rate) * 1e9).rounded(.up)))
    }

    package mutating func take(_ count: Int) {
        self.tokens -= Double(count)
    }

    /// Gives back what was taken for bytes that did not move after all.
    package mutating func refund(_ count: Int) {
        self.tokens = min(self.capacity, self.tokens + Double(count))
    }

    // MARK: the queue of refused tasks

    /// Whether `task` may take now as far as the queue goes: nobody waits, or it is first.
    /// Drops waiters that stopped asking.
    package mutating func isTurn(of task: Int, now: ContinuousClock.Instant) -> Bool {
        while let first = self.waiters.first, first != task,
            let asked = self.lastAsked[first], now - asked > Self.staleAfter
        {
            self.waiters.removeFirst()
            self.lastAsked.removeValue(forKey: first)
        }
        return self.waiters.first.map { $0 == task } ?? true
    }

    /// `task` was refused: it queues (once), and its place is kept while it keeps asking.
    package mutating func enqueue(_ task: Int, now: ContinuousClock.Instant) {
        if self.lastAsked.updateValue(now, forKey: task) == nil { self.waiters.append(task) }
    }

    /// `task` took its turn, or ended.
    package mutating func dequeue(_ task: Int) {
        guard self.lastAsked.removeValue(forKey: task) != nil else { return }
        self.waiters.removeAll { $0 == task }
    }
}

import AFProxyModel

/// The rules and the buckets that enforce them, as one plain value behind the `Throttler`'s
/// lock: one `TokenBucket` per rule and direction. Which buckets a task is under is worked out
/// once per task and kept (`resolved`) until the rules change, so a chunk costs a dictionary
/// lookup and a few subtractions.
package struct ThrottleState: Sendable {
    package struct BucketKey: Sendable, Hashable {
        package var scope: ThrottleScope
        package var direction: ThrottleDirection

        package init(scope: ThrottleScope, direction: ThrottleDirection) {
            self.scope = scope
            self.direction = direction
        }
    }

    /// The answer to a task that wants to move bytes.
    package enum Grant: Sendable, Equatable {
        /// It may; `available` bytes are there in every bucket it is under (it may take more
        /// and go into debt).
        case go(available: Int)
        /// Not yet: ask again after this long.
        case wait(Duration)
    }

    /// The longest a refused task waits before it asks again, so that a rule changed or removed
    /// reaches a paused transfer promptly.
    package static let longestWait: Duration = .milliseconds(200)
    /// How soon a task asks again that found tokens but others queued before it: they are about
    /// to take their turn.
    package static let queuedWait: Duration = .milliseconds(5)

    package private(set) var rules = ThrottleRuleSet()
    package private(set) var buckets: [BucketKey: TokenBucket] = [:]
    private var resolved: [Int: [BucketKey]] = [:]

    package init(rules: ThrottleRuleSet = ThrottleRuleSet()) {
        self.rules = rules
        self.sync(now: .now)
    }

    package var isActive: Bool { !self.buckets.isEmpty }

    /// Changes the rules; buckets of rules that stay keep their tokens and debt.
    package mutating func update<R>(now: ContinuousClock.Instant, _ body: (inout ThrottleRuleSet) -> R) -> R {
        let result = body(&self.rules)
        self.sync(now: now)
        return result
    }

    private mutating func sync(now: ContinuousClock.Instant) {
        var wanted: [BucketKey: Int64] = [:]
        for rule in self.rules.rules {
            for direction in ThrottleDirection.allCases {
                if let rate = rule.rate(direction) {
                    wanted[BucketKey(scope: rule.scope, direction: direction)] = rate.bytesPerSecond
                }
            }
        }
        self.buckets = self.buckets.filter { wanted[$0.key] != nil }
        for (key, rate) in wanted {
            if self.buckets[key] == nil {
                self.buckets[key] = TokenBucket(rate: rate, now: now)
            } else if self.buckets[key]!.rate != rate {
                self.buckets[key]!.setRate(rate, now: now)
            }
        }
        self.resolved.removeAll()
    }

    private mutating func keys(task: Int, host: String) -> [BucketKey] {
        if let keys = self.resolved[task] { return keys }
        var keys: [BucketKey] = []
        for scope in self.rules.scopes(task: task, host: host) {
            for direction in ThrottleDirection.allCases {
                let key = BucketKey(scope: scope, direction: direction)
                if self.buckets[key] != nil { keys.append(key) }
            }
        }
        self.resolved[task] = keys
        return keys
    }

    /// Whether `task` may move bytes in `direction` now, `need` of them at least (capped at
    /// each bucket's capacity; 0: it may once no bucket is in debt).
    package mutating func acquire(
        task: Int, host: String, _ direction: ThrottleDirection, need: Int, now: ContinuousClock.Instant
    ) -> Grant {
        // Narrowest first (task, host, global): a task refused by its own rule waits in no
        // shared queue meanwhile, where it would hold up the tasks queued behind it.
        let keys = self.keys(task: task, host: host).filter { $0.direction == direction }
        var available = Int.max
        for (index, key) in keys.enumerated() {
            var bucket = self.buckets[key]!
            bucket.refill(now: now)
            var wait: Duration?
            if let refill = bucket.wait(for: need) {
                wait = refill
            } else if !bucket.isTurn(of: task, now: now) {
                wait = Self.queuedWait
            }
            if let wait {
                bucket.enqueue(task, now: now)
                self.buckets[key] = bucket
                for wider in keys[(index + 1)...] { self.buckets[wider]!.dequeue(task) }
                return .wait(min(wait, Self.longestWait))
            }
            available = min(available, Int(bucket.tokens.rounded(.down)))
            self.buckets[key] = bucket
        }
        for key in keys { self.buckets[key]!.dequeue(task) }
        return .go(available: max(available, 0))
    }

    /// `count` bytes moved (or are about to, having been granted).
    package mutating func take(task: Int, host: String, _ direction: ThrottleDirection, _ count: Int) {
        for key in self.keys(task: task, host: host) where key.direction == direction {
            self.buckets[key]!.take(count)
        }
    }

    /// Bytes taken for did not move after all.
    package mutating func refund(task: Int, host: String, _ direction: ThrottleDirection, _ count: Int) {
        for key in self.keys(task: task, host: host) where key.direction == direction {
            self.buckets[key]!.refund(count)
        }
    }

    /// The task ended: it waits in no queue and its own rule goes.
    package mutating func forget(task: Int, now: ContinuousClock.Instant) {
        if let keys = self.resolved.removeValue(forKey: task) {
            for key in keys { self.buckets[key]?.dequeue(task) }
        }
        if self.rules.rule(for: .task(task)) != nil {
            self.update(now: now) { $0.removeTask(task) }
        }
    }
}

import AFProxyModel

/// The throttle rules in force and the buckets that enforce them, shared by the curl session
/// thread, the tunnels' event loops and the control socket: the throttle kind's `LiveRules`.
/// `isActive` is an atomic read, so a transfer with no rule anywhere pays that one load per
/// chunk and nothing else.
package typealias Throttler = LiveRules<ThrottleState>

extension LiveRules where State == ThrottleState {
    /// No rule yet: a daemon's before it is configured, and tests'.
    package convenience init(rules: ThrottleRuleSet = ThrottleRuleSet()) {
        self.init(ThrottleState(rules: rules))
    }

    /// `defaults` from the configuration file, the runtime rules `store` kept from the previous
    /// run on top of them.
    package convenience init(defaults: [ThrottleRule], store: (any RuleStore<SavedThrottleRules>)?) {
        self.init(ThrottleState(rules: ThrottleRuleSet(defaults: defaults)), store: store)
        self.restore()
    }

    package var rules: ThrottleRuleSet { self.ruleSet }

    /// Sets the given directions of `scope`; answers the rule now in force.
    package func set(_ scope: ThrottleScope, down: ByteRate?, up: ByteRate?) -> ThrottleRule {
        self.change { rules in
            if let down { rules.set(scope, rate: down, directions: [.down]) }
            if let up { rules.set(scope, rate: up, directions: [.up]) }
            return rules.rule(for: scope)!
        }
    }

    /// Removes `directions` of the rule of `scope`; false when no rule was in force there.
    package func remove(_ scope: ThrottleScope, directions: Set<ThrottleDirection>) -> Bool {
        self.change { $0.remove(scope, directions: directions) }
    }

    /// The configuration file was read again; running transfers follow at their next chunk.
    package func replaceDefaults(_ defaults: [ThrottleRule]) {
        self.change { $0.replaceDefaults(defaults) }
    }

    package func limit(task: Int, host: String) -> TaskLimit? {
        guard self.isActive else { return nil }
        return self.withState { $0.rules.limit(task: task, host: host) }
    }

    package func acquire(task: Int, host: String, _ direction: ThrottleDirection, need: Int) -> ThrottleState.Grant {
        self.withState { $0.acquire(task: task, host: host, direction, need: need, now: .now) }
    }

    package func take(task: Int, host: String, _ direction: ThrottleDirection, _ count: Int) {
        self.withState { $0.take(task: task, host: host, direction, count) }
    }

    package func refund(task: Int, host: String, _ direction: ThrottleDirection, _ count: Int) {
        self.withState { $0.refund(task: task, host: host, direction, count) }
    }

    /// The task ended: it waits in no queue and its own rule goes (task rules are not kept).
    package func forget(task: Int) {
        guard self.isActive else { return }
        self.withState(mayEnd: true) { $0.forget(task: task, now: .now) }
    }
}

/// What a transport needs to throttle one task's bytes: the daemon's throttler and who the task
/// is (its id and the host it goes to), handed to the transfer when the task makes it.
package struct ThrottleTicket: Sendable {
    package let throttler: Throttler
    package let task: Int
    package let host: String

    package init(throttler: Throttler, task: Int, host: String) {
        self.throttler = throttler
        self.task = task
        self.host = host
    }

    @inline(__always) package var isActive: Bool { self.throttler.isActive }

    package func acquire(_ direction: ThrottleDirection, need: Int) -> ThrottleState.Grant {
        self.throttler.acquire(task: self.task, host: self.host, direction, need: need)
    }

    package func take(_ direction: ThrottleDirection, _ count: Int) {
        self.throttler.take(task: self.task, host: self.host, direction, count)
    }

    package func refund(_ direction: ThrottleDirection, _ count: Int) {
        self.throttler.refund(task: self.task, host: self.host, direction, count)
    }
}

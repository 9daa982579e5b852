import AFProxyModel
import Synchronization

/// The daemon's one `ThrottleState` behind a lock, shared by the curl session thread and the
/// tunnels' event loops. `isActive` is an atomic read, so a transfer with no rule anywhere pays
/// that one load per chunk and nothing else.
package final class Throttler: Sendable {
    private let state: Locked<ThrottleState>
    private let active: Atomic<Bool>

    package init(rules: ThrottleRuleSet = ThrottleRuleSet()) {
        let state = ThrottleState(rules: rules)
        self.active = Atomic(state.isActive)
        self.state = Locked(state)
    }

    package var isActive: Bool { self.active.load(ordering: .relaxed) }

    package var rules: ThrottleRuleSet { self.state.withLock { $0.rules } }

    /// Changes the rules; running transfers follow at their next chunk or their next check.
    package func update<R: Sendable>(_ body: (inout ThrottleRuleSet) -> R) -> R {
        self.state.withLock { state in
            let result = state.update(now: .now, body)
            self.active.store(state.isActive, ordering: .relaxed)
            return result
        }
    }

    package func limit(task: Int, host: String) -> TaskLimit? {
        guard self.isActive else { return nil }
        return self.state.withLock { $0.rules.limit(task: task, host: host) }
    }

    package func acquire(task: Int, host: String, _ direction: ThrottleDirection, need: Int) -> ThrottleState.Grant {
        self.state.withLock { $0.acquire(task: task, host: host, direction, need: need, now: .now) }
    }

    package func take(task: Int, host: String, _ direction: ThrottleDirection, _ count: Int) {
        self.state.withLock { $0.take(task: task, host: host, direction, count) }
    }

    package func refund(task: Int, host: String, _ direction: ThrottleDirection, _ count: Int) {
        self.state.withLock { $0.refund(task: task, host: host, direction, count) }
    }

    package func forget(task: Int) {
        guard self.isActive else { return }
        self.state.withLock { state in
            state.forget(task: task, now: .now)
            self.active.store(state.isActive, ordering: .relaxed)
        }
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

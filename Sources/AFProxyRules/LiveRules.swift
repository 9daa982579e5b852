import AFProxyModel
import Synchronization

/// One rule kind in force in the daemon, shared by the event loops, the session thread and the
/// control socket: its `RuleState` behind a lock, whether any rule is in force as an atomic (a
/// task under no rule of the kind pays that one load), and its store, handed the runtime rules
/// after each change that altered them. The hand-over is made under the lock, so the writes
/// follow the changes in order; the store writes off the caller's thread.
package final class LiveRules<State: RuleState>: Sendable {
    private let state: Locked<State>
    private let active: Atomic<Bool>
    /// Where the runtime rules are kept; nil: not kept (no state directory, or a kind from the
    /// configuration only).
    package let store: (any RuleStore<State.Rules.Saved>)?

    package init(_ state: State, store: (any RuleStore<State.Rules.Saved>)? = nil) {
        self.active = Atomic(state.isActive)
        self.state = Locked(state)
        self.store = store
    }

    package var isActive: Bool { self.active.load(ordering: .relaxed) }

    /// The rules in force, as one value.
    package var ruleSet: State.Rules { self.state.withLock { $0.ruleSet } }

    /// Brings back what a previous run kept, on top of the configured rules; answers how many
    /// rules are in force then (0 when nothing was kept). A store that cannot be read says so
    /// itself and gives nothing back.
    @discardableResult
    package func restore() -> Int {
        guard let saved = self.store?.load() else { return 0 }
        return self.state.withLock { state in
            state.update(now: .now) { $0.restore(saved) }
            self.active.store(state.isActive, ordering: .relaxed)
            return state.ruleSet.count
        }
    }

    /// Changes the rules (the enforcement follows); the store gets the runtime rules when the
    /// change altered them.
    package func change<R: Sendable>(_ body: (inout State.Rules) -> R) -> R {
        self.state.withLock { state in
            let before = self.store == nil ? nil : state.ruleSet.saved
            let result = state.update(now: .now, body)
            self.active.store(state.isActive, ordering: .relaxed)
            if let store = self.store, case let after = state.ruleSet.saved, after != before {
                store.save(after)
            }
            return result
        }
    }

    /// Reads or steps the state itself (the throttle's buckets, per chunk), leaving the runtime
    /// rules as they are; `mayEnd` when it may end what is in force (a task's own rule going with
    /// the task), so that the flag follows.
    package func withState<R: Sendable>(mayEnd: Bool = false, _ body: (inout State) -> R) -> R {
        self.state.withLock { state in
            let result = body(&state)
            if mayEnd { self.active.store(state.isActive, ordering: .relaxed) }
            return result
        }
    }
}

import AFProxyModel
import AFProxyRules

/// The one way a new task of any kind comes to be, for the three paths that make them (a proxied
/// request, a tunnel, a download): the hold rules are asked first, so that a caught task is made
/// suspended before any byte moves; then it is registered with the next id; then `created` is
/// published. The paths differ only in the task they make. (A download a previous run left comes
/// back through `TaskRegistry.restore` instead: it is not new, and keeps its id.)
struct TaskGate: Sendable {
    let registry: TaskRegistry
    /// Every kind, not only the holds: a kind that asks about new tasks asks here.
    let rules: RuleBook
    let events: EventBus

    /// `make` builds the task from its id and the hold rule that caught it (nil: none did).
    /// `holdable` false: the hold rules are not asked (a task a map-local rule answers at once).
    func admit<NewTask: ManagedTask>(
        _ kind: TaskKind, _ facts: @autoclosure () -> HoldFacts, holdable: Bool = true,
        _ make: (_ id: Int, _ heldBy: Int?) -> NewTask
    ) -> NewTask {
        let heldBy = holdable ? self.rules.holds.catchTask(facts()) : nil
        let task = self.registry.register(kind) { id in make(id, heldBy) }
        self.events.publish(.created, task.record())
        return task
    }
}

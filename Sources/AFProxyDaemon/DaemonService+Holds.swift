import AFProxyModel
import AFProxyStore

extension DaemonService {
    /// A stop does not wait for held tasks: they wait for a person, not for their transfer, and
    /// would only use up the grace period. Their clients get 503 at once.
    func cancelHeldTasks() {
        let held = self.manager.tasks(includeHistory: false).filter { $0.heldBy != nil && $0.kind != .download }
        for task in held { _ = try? self.manager.cancel(id: task.id, because: .daemonStopping()) }
    }
}

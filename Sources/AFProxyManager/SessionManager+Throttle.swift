import AFProxyModel
import AFProxyRules

/// The one throttle change that needs the manager: a task's rule, for a task that must be live.
/// Every other rule change goes to the rule book (`rules.throttle`) directly.
extension SessionManager {
    /// Sets a rule's rate in the directions given (nil: unchanged); a task rule needs a live task.
    package func setThrottle(
        _ scope: ThrottleScope, down: ByteRate?, up: ByteRate?
    ) throws(ManagerError)
        -> ThrottleRule
    {
        if case .task(let id) = scope {
            let (live, recorded) = self.registry.find(id: id)
            guard live != nil else { throw recorded != nil ? .completed(task: id) : .unknownTask(id) }
        }
        return self.rules.throttle.set(scope, down: down, up: up)
    }
}

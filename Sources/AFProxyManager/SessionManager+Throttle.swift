import AFProxyCurl
import AFProxyModel
import AFProxyRules

/// Throttling as the manager offers it: the tickets its tasks' transports consult, the limit
/// a record shows, and the rule changes the control API asks for.
extension SessionManager {
    var throttler: Throttler { self.rules.throttle }

    /// The throttle rules (the daemon's reload replaces their defaults).
    package var throttle: Throttler { self.rules.throttle }

    func throttleTicket(task: Int, host: String) -> ThrottleTicket {
        self.rules.throttleTicket(task: task, host: host)
    }

    /// The rules in force, global first, then hosts, then tasks.
    package func throttleRules() -> [ThrottleRule] {
        self.rules.throttle.rules.rules
    }

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
        return self.throttle.set(scope, down: down, up: up)
    }

    /// Removes a rule (or one direction of it).
    package func removeThrottle(_ scope: ThrottleScope, directions: Set<ThrottleDirection>) throws(ManagerError) {
        guard self.throttle.remove(scope, directions: directions) else {
            throw .unknownRule("no throttle rule for \(scope)")
        }
    }
}

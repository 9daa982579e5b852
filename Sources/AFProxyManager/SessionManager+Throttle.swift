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
    ) throws(ThrottleRefusal)
        -> ThrottleRule
    {
        if case .task(let id) = scope {
            let live = self.registry.withLock { $0.live[id] != nil }
            guard live else {
                let known = self.registry.withLock { $0.history.record(id: id) != nil }
                throw known
                    ? ThrottleRefusal(status: 409, message: "task \(id) has completed")
                    : ThrottleRefusal(status: 404, message: "no task with id \(id)")
            }
        }
        return self.throttle.set(scope, down: down, up: up)
    }

    /// Removes a rule (or one direction of it).
    package func removeThrottle(_ scope: ThrottleScope, directions: Set<ThrottleDirection>) throws(ThrottleRefusal) {
        guard self.throttle.remove(scope, directions: directions) else {
            throw ThrottleRefusal(status: 404, message: "no throttle rule for \(scope)")
        }
    }
}

/// Why a throttle change was refused: the control API answers `status` with `message`.
package struct ThrottleRefusal: Error, Sendable, Equatable {
    package var status: Int
    package var message: String
}

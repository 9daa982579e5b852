/// A verb that does not apply to the task's current state (resume a running task, suspend a
/// completed one): the control API answers it with 409.
package struct IllegalTransition: Error, Sendable, Equatable, CustomStringConvertible {
    package var verb: String
    package var state: TaskState
    /// Why, when the state alone does not say it (a download renaming its file into place).
    package var reason: String?

    package init(verb: String, state: TaskState, reason: String? = nil) {
        self.verb = verb
        self.state = state
        self.reason = reason
    }

    package var description: String {
        if let reason { return "cannot \(self.verb) the task now: \(reason)" }
        return "cannot \(self.verb) a task that is \(self.state.rawValue)"
    }
}

/// The transitions of one task's state, as a plain value: it takes the verbs a person or the
/// transfer applies and answers with what the caller must do, so that it is tested without I/O.
///
/// Only real changes produce an action; repeating a verb (suspending a suspended task) is an
/// illegal transition, which is why `suspended` and `resumed` events are published only when the
/// state really changes, as AFNetworking's `af_suspend` / `af_resume` do.
public struct TaskStateMachine: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// Pause the transfer in both directions and publish `suspended`.
        case pauseTransfer
        /// Continue the transfer where it stopped and publish `resumed`.
        case resumeTransfer
        /// Abort the transfer; its completion follows.
        case abortTransfer
        /// Record the final state, publish `completed` and move the task to history.
        case finish
    }

    public private(set) var state: TaskState

    public init(state: TaskState = .running) {
        self.state = state
    }

    public mutating func suspend() throws(IllegalTransition) -> Action {
        guard self.state == .running else { throw IllegalTransition(verb: "suspend", state: self.state) }
        self.state = .suspended
        return .pauseTransfer
    }

    public mutating func resume() throws(IllegalTransition) -> Action {
        guard self.state == .suspended else { throw IllegalTransition(verb: "resume", state: self.state) }
        self.state = .running
        return .resumeTransfer
    }

    public mutating func cancel() throws(IllegalTransition) -> Action {
        switch self.state {
        case .running, .suspended:
            self.state = .canceling
            return .abortTransfer
        case .canceling, .completed:
            throw IllegalTransition(verb: "cancel", state: self.state)
        }
    }

    /// The transfer ended, by itself or after a cancel. Completing twice is a programming error
    /// the caller avoids; it answers `nil` rather than trapping in a daemon.
    public mutating func complete() -> Action? {
        guard self.state != .completed else { return nil }
        self.state = .completed
        return .finish
    }
}

/// A verb that does not apply to the task's current state (resume a running task, suspend a
/// completed one): the control API answers it with 409.
public struct IllegalTransition: Error, Sendable, Equatable, CustomStringConvertible {
    public var verb: String
    public var state: TaskState

    public init(verb: String, state: TaskState) {
        self.verb = verb
        self.state = state
    }

    public var description: String {
        "cannot \(self.verb) a task that is \(self.state.rawValue)"
    }
}

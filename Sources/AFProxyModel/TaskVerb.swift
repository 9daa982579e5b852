/// What a person may do to a live task. The transitions are the same for every task kind, so
/// they live here once; each kind's state machine adds what the verb means for its transport.
package enum TaskVerb: String, Sendable {
    case suspend
    case resume
    case cancel
}

extension TaskState {
    /// Moves to the state `verb` leads to: suspend a running task, resume a suspended one,
    /// cancel one that is running or suspended. Anything else changes nothing and throws, which
    /// is why a repeated verb produces no second action and no second event.
    package mutating func apply(_ verb: TaskVerb) throws(IllegalTransition) {
        switch (verb, self) {
        case (.suspend, .running): self = .suspended
        case (.resume, .suspended): self = .running
        case (.cancel, .running), (.cancel, .suspended): self = .canceling
        default: throw IllegalTransition(verb: verb.rawValue, state: self)
        }
    }
}

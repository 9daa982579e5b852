import AFProxyModel

/// Why the manager refused what it was asked (a verb on a task, a download, a task's throttle
/// rule): the one error of its boundary, a struct around a private code as `TaskFailure` is, so
/// that causes can be added without breaking a caller's `switch`. It says what went wrong, never in HTTP: the
/// control API maps its `kind` to a status (`ManagerError+Status` there), and a caller in the
/// daemon that only needs it gone (`try?`) learns nothing of statuses it has no use for.
package struct ManagerError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case unknownTask = "unknown-task"
        case illegalTransition = "illegal-transition"
        case taskCompleted = "task-completed"
        case invalid = "invalid"
        case pathTaken = "path-taken"
    }

    /// What a caller needs to tell refusals apart by: the thing named is not there, it is there but
    /// its state or another's claim stands in the way, or the request itself cannot be done as given.
    package enum Kind: Sendable, Equatable {
        case notFound
        case conflict
        case invalid
    }

    private let reason: Code
    /// What was refused and why, in words, for a person: the body of the control API's answer.
    package let message: String

    private init(_ reason: Code, _ message: String) {
        self.reason = reason
        self.message = message
    }

    package var description: String { self.message }

    /// The stable short name of the cause, for logs and tests.
    package var code: String { self.reason.rawValue }

    package var kind: Kind {
        switch self.reason {
        case .unknownTask: .notFound
        case .illegalTransition, .taskCompleted, .pathTaken: .conflict
        case .invalid: .invalid
        }
    }

    /// No task, live or in the history, has this id.
    package static func unknownTask(_ id: Int) -> ManagerError {
        .init(.unknownTask, "no task with id \(id)")
    }

    /// The task is in a state the verb cannot leave from (suspend a suspended task, resume a
    /// completed one).
    package static func illegal(_ transition: IllegalTransition, task id: Int) -> ManagerError {
        .init(.illegalTransition, "task \(id): \(transition)")
    }

    /// The task has completed: what needs a live task (a task's throttle rule) cannot be.
    package static func completed(task id: Int) -> ManagerError {
        .init(.taskCompleted, "task \(id) has completed")
    }

    /// What was asked cannot be done as given (a URL that is not http(s), a malformed pin, a path
    /// the daemon cannot write).
    package static func invalid(_ message: String) -> ManagerError {
        .init(.invalid, message)
    }

    /// A file is where a download would go (without `force`), or another download is making it.
    package static func pathTaken(_ message: String) -> ManagerError {
        .init(.pathTaken, message)
    }
}

/// What the session publishes, only on real changes: the control socket's event stream, the
/// journal logger and the metrics all read this one stream.
package struct TaskEvent: Sendable, Codable, Equatable {
    package enum Kind: String, Sendable, Codable, CaseIterable {
        case created
        case suspended
        case resumed
        case progress
        case completed
        /// A download (or a proxied GET) continued a broken-off response at the offset it had
        /// reached; the task's last `resumes` entry says where.
        case resumedAtOffset = "resumed-at-offset"
        /// A hold rule caught a new task: it was created suspended (right after `created`, in
        /// place of `suspended`); the task's `heldBy` names the rule.
        case held
        /// A person changed a held request (`afproxyctl edit`); the task's `edits` say how.
        case edited
    }

    package var event: Kind
    package var task: TaskRecord

    package init(_ event: Kind, task: TaskRecord) {
        self.event = event
        self.task = task
    }
}

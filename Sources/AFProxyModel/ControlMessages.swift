/// Bodies of the control API besides task records and stats, shared by the daemon and afproxyctl.
package struct TaskList: Sendable, Codable, Equatable {
    package var tasks: [TaskRecord]

    package init(tasks: [TaskRecord]) {
        self.tasks = tasks
    }
}

/// Every refusal of the control API: `{"error": "..."}` with the HTTP status saying which kind.
package struct ControlErrorBody: Sendable, Codable, Equatable {
    package var error: String

    package init(error: String) {
        self.error = error
    }
}

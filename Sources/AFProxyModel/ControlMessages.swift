/// Bodies of the control API besides task records and stats, shared by the daemon and afproxyctl.
public struct TaskList: Sendable, Codable, Equatable {
    public var tasks: [TaskRecord]

    public init(tasks: [TaskRecord]) {
        self.tasks = tasks
    }
}

/// Every refusal of the control API: `{"error": "..."}` with the HTTP status saying which kind.
public struct ControlErrorBody: Sendable, Codable, Equatable {
    public var error: String

    public init(error: String) {
        self.error = error
    }
}

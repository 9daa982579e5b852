/// What the session publishes, only on real changes: the control socket's event stream, the
/// journal logger and the metrics all read this one stream.
public struct TaskEvent: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case created
        case suspended
        case resumed
        case progress
        case completed
    }

    public var event: Kind
    public var task: TaskRecord

    public init(_ event: Kind, task: TaskRecord) {
        self.event = event
        self.task = task
    }
}

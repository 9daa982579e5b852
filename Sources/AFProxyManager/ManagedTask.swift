import AFProxyModel

/// What the registry holds and the verbs act on, whatever carries the task's bytes: an HTTP
/// exchange driven by curl (`TaskDelegate`) or a CONNECT tunnel relayed by NIO (`StreamTask`).
/// The smallest common face, so that both live in one registry with the same verbs, events and
/// history.
///
/// Each method may be called from any thread. A verb that applies answers only once the change
/// is in force for the record (a suspended task counts no more bytes); its I/O follows.
protocol ManagedTask: AnyObject, Sendable {
    var id: Int { get }
    var kind: TaskKind { get }
    var state: TaskState { get }
    var bytesUp: Int64 { get }
    var bytesDown: Int64 { get }
    /// The task as the control API shows it, now.
    func record() -> TaskRecord
    func suspend() throws(IllegalTransition)
    func resume() throws(IllegalTransition)
    /// `reason` becomes the task's error: "canceled" when a person asked for it.
    func cancel(reason: String) throws(IllegalTransition)
}

extension TaskDelegate: ManagedTask {}

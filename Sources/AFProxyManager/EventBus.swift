import AFProxyModel
import Synchronization

/// The one stream of task events that the control socket, the journal logger and the metrics
/// read. Subscribers are called on the publishing thread (often the session thread) and must
/// only enqueue. With no subscriber, publishing costs one atomic load: records are not even built.
public final class EventBus: Sendable {
    public typealias Subscriber = @Sendable (TaskEvent) -> Void

    private let subscribers = Mutex<[Int: Subscriber]>([:])
    private let count = Atomic<Int>(0)
    private let nextToken = Atomic<Int>(0)

    public init() {}

    public var hasSubscribers: Bool { self.count.load(ordering: .relaxed) > 0 }

    /// Answers a token for `unsubscribe`.
    public func subscribe(_ subscriber: @escaping Subscriber) -> Int {
        let token = self.nextToken.add(1, ordering: .relaxed).newValue
        self.subscribers.withLock { $0[token] = subscriber }
        self.count.add(1, ordering: .relaxed)
        return token
    }

    public func unsubscribe(_ token: Int) {
        if self.subscribers.withLock({ $0.removeValue(forKey: token) }) != nil {
            self.count.subtract(1, ordering: .relaxed)
        }
    }

    /// `record` is evaluated only when someone listens.
    public func publish(_ kind: TaskEvent.Kind, _ record: @autoclosure () -> TaskRecord) {
        guard self.hasSubscribers else { return }
        let event = TaskEvent(kind, task: record())
        for subscriber in self.subscribers.withLock({ Array($0.values) }) {
            subscriber(event)
        }
    }
}

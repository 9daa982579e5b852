import AFProxyModel
import Synchronization

/// The one stream of task events that the control socket, the journal logger and the metrics
/// read. Subscribers are called on the publishing thread (often the session thread) and must
/// only enqueue. A subscriber names the kinds it wants, and publishing a kind nobody wants costs
/// one atomic load: its record is not even built. (The journal logger wants `completed` only;
/// without the filter every request paid for a `created` record nobody read.)
package final class EventBus: Sendable {
    package typealias Subscriber = @Sendable (TaskEvent) -> Void

    private struct Subscription {
        var kinds: Set<TaskEvent.Kind>
        var subscriber: Subscriber
    }

    private static let allKinds = Set(TaskEvent.Kind.allCases)

    private let subscriptions = Locked<[Int: Subscription]>([:])
    /// One bit per kind that at least one subscriber wants; rewritten under the lock.
    private let wanted = Atomic<UInt8>(0)
    private let nextToken = Atomic<Int>(0)

    package init() {}

    package func hasSubscribers(for kind: TaskEvent.Kind) -> Bool {
        self.wanted.load(ordering: .relaxed) & Self.bit(kind) != 0
    }

    /// Answers a token for `unsubscribe`. `kinds`: the events wanted; all when nil.
    package func subscribe(_ kinds: Set<TaskEvent.Kind>? = nil, _ subscriber: @escaping Subscriber) -> Int {
        let token = self.nextToken.add(1, ordering: .relaxed).newValue
        self.subscriptions.withLock { subscriptions in
            subscriptions[token] = Subscription(kinds: kinds ?? Self.allKinds, subscriber: subscriber)
            self.wanted.store(Self.mask(subscriptions), ordering: .relaxed)
        }
        return token
    }

    package func unsubscribe(_ token: Int) {
        self.subscriptions.withLock { subscriptions in
            subscriptions.removeValue(forKey: token)
            self.wanted.store(Self.mask(subscriptions), ordering: .relaxed)
        }
    }

    private static func mask(_ subscriptions: [Int: Subscription]) -> UInt8 {
        subscriptions.values.reduce(0) { mask, subscription in
            subscription.kinds.reduce(mask) { $0 | Self.bit($1) }
        }
    }

    /// `record` is evaluated only when someone listens for `kind`.
    package func publish(_ kind: TaskEvent.Kind, _ record: @autoclosure () -> TaskRecord) {
        guard self.hasSubscribers(for: kind) else { return }
        let event = TaskEvent(kind, task: record())
        let subscribers = self.subscriptions.withLock { subscriptions in
            subscriptions.values.filter { $0.kinds.contains(kind) }.map(\.subscriber)
        }
        for subscriber in subscribers { subscriber(event) }
    }

    private static func bit(_ kind: TaskEvent.Kind) -> UInt8 {
        switch kind {
        case .created: 1
        case .suspended: 2
        case .resumed: 4
        case .progress: 8
        case .completed: 16
        case .resumedAtOffset: 32
        }
    }
}

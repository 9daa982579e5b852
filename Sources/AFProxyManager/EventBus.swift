import AFProxyModel
import Synchronization

/// The one stream of task events that the control socket, the journal logger and the metrics
/// read. Subscribers are called on the publishing thread (often the session thread) and must
/// only enqueue. A subscriber names the kinds it wants, and publishing a kind nobody wants costs
/// one atomic load: its record is not even built. (The journal logger wants `completed` only;
/// without the filter every request paid for a `created` record nobody read.)
///
/// Network events (`network-lost`, `network-restored`) travel on the same bus, published by the
/// daemon's network watcher; only a subscriber of the whole stream (`subscribeStream`) gets them,
/// so a task subscriber keeps receiving `TaskEvent`s, each with its task.
package final class EventBus: Sendable {
    package typealias Subscriber = @Sendable (TaskEvent) -> Void
    package typealias StreamSubscriber = @Sendable (StreamEvent) -> Void

    private struct Subscription {
        var kinds: Set<TaskEvent.Kind>
        var network: Bool
        var deliver: StreamSubscriber
    }

    private static let allKinds = Set(TaskEvent.Kind.allCases)

    /// The subscriptions by token, and who gets each kind, in the order they subscribed: worked
    /// out on each change, so that publishing copies no list (filtering the subscriptions took
    /// three allocations an event, a completed request's among them).
    private struct Subscriptions {
        var byToken: [Int: Subscription] = [:]
        /// Indexed by the kind's bit number (`EventBus.bit`).
        var byKind: [[StreamSubscriber]] = Array(repeating: [], count: 16)
        var network: [StreamSubscriber] = []

        mutating func regroup() {
            let ordered = self.byToken.sorted { $0.key < $1.key }.map(\.value)
            for kind in TaskEvent.Kind.allCases {
                self.byKind[EventBus.slot(kind)] = ordered.filter { $0.kinds.contains(kind) }.map(\.deliver)
            }
            self.network = ordered.filter(\.network).map(\.deliver)
        }
    }

    private let subscriptions = Locked(Subscriptions())
    /// One bit per kind that at least one subscriber wants; rewritten under the lock.
    private let wanted = Atomic<UInt16>(0)
    private let nextToken = Atomic<Int>(0)

    package init() {}

    package func hasSubscribers(for kind: TaskEvent.Kind) -> Bool {
        self.wanted.load(ordering: .relaxed) & Self.bit(kind) != 0
    }

    /// Answers a token for `unsubscribe`. `kinds`: the task events wanted; all when nil.
    package func subscribe(_ kinds: Set<TaskEvent.Kind>? = nil, _ subscriber: @escaping Subscriber) -> Int {
        self.add(
            Subscription(kinds: kinds ?? Self.allKinds, network: false) { event in
                if case .task(let taskEvent) = event { subscriber(taskEvent) }
            })
    }

    /// Every task event and every network event, in the order published (the event stream).
    package func subscribeStream(_ subscriber: @escaping StreamSubscriber) -> Int {
        self.add(Subscription(kinds: Self.allKinds, network: true, deliver: subscriber))
    }

    private func add(_ subscription: Subscription) -> Int {
        let token = self.nextToken.add(1, ordering: .relaxed).newValue
        self.subscriptions.withLock { subscriptions in
            subscriptions.byToken[token] = subscription
            subscriptions.regroup()
            self.wanted.store(Self.mask(subscriptions.byToken), ordering: .relaxed)
        }
        return token
    }

    package func unsubscribe(_ token: Int) {
        self.subscriptions.withLock { subscriptions in
            subscriptions.byToken.removeValue(forKey: token)
            subscriptions.regroup()
            self.wanted.store(Self.mask(subscriptions.byToken), ordering: .relaxed)
        }
    }

    private static func mask(_ subscriptions: [Int: Subscription]) -> UInt16 {
        subscriptions.values.reduce(0) { mask, subscription in
            subscription.kinds.reduce(mask | (subscription.network ? Self.networkBit : 0)) { $0 | Self.bit($1) }
        }
    }

    /// `record` is evaluated only when someone listens for `kind`.
    package func publish(_ kind: TaskEvent.Kind, _ record: @autoclosure () -> TaskRecord) {
        guard self.hasSubscribers(for: kind) else { return }
        let event = StreamEvent.task(TaskEvent(kind, task: record()))
        let subscribers = self.subscriptions.withLock { $0.byKind[Self.slot(kind)] }
        for subscriber in subscribers { subscriber(event) }
    }

    /// The network went away or came back (the daemon's watcher, after `networkChanged`).
    package func publishNetwork(_ kind: NetworkEvent.Kind, _ reachability: Reachability) {
        guard self.wanted.load(ordering: .relaxed) & Self.networkBit != 0 else { return }
        let event = StreamEvent.network(NetworkEvent(kind, network: reachability))
        let subscribers = self.subscriptions.withLock { $0.network }
        for subscriber in subscribers { subscriber(event) }
    }

    private static let networkBit: UInt16 = 64

    private static func slot(_ kind: TaskEvent.Kind) -> Int { Self.bit(kind).trailingZeroBitCount }

    private static func bit(_ kind: TaskEvent.Kind) -> UInt16 {
        switch kind {
        case .created: 1
        case .suspended: 2
        case .resumed: 4
        case .progress: 8
        case .completed: 16
        case .resumedAtOffset: 32
        case .held: 128
        case .edited: 256
        }
    }
}

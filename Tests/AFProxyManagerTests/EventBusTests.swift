import AFProxyManager
import AFProxyModel
import FoundationEssentials
import Synchronization
import Testing

/// The one event stream: who gets which kinds, and that a kind nobody wants costs no record.
@Suite struct EventBusTests {
    /// Collects what a subscriber was called with (subscribers must be Sendable).
    private final class Received: Sendable {
        private let events = Mutex<[String]>([])

        func append(_ event: TaskEvent) {
            self.events.withLock { $0.append("\(event.event.rawValue) #\(event.task.id)") }
        }

        var all: [String] { self.events.withLock { $0 } }
    }

    /// Counts how often a record was built.
    private final class Builds: Sendable {
        private let count = Atomic<Int>(0)

        func record(_ id: Int) -> TaskRecord {
            self.count.add(1, ordering: .relaxed)
            return TaskRecord(
                id: id, kind: .data, state: .running, method: "GET", url: "http://h/", client: "c",
                createdAt: Date(timeIntervalSince1970: 0))
        }

        var made: Int { self.count.load(ordering: .relaxed) }
    }

    @Test func publishingWithNoSubscriberBuildsNoRecord() {
        let bus = EventBus()
        let builds = Builds()
        for kind in [TaskEvent.Kind.created, .suspended, .resumed, .progress, .completed] {
            #expect(!bus.hasSubscribers(for: kind))
            bus.publish(kind, builds.record(1))
        }
        #expect(builds.made == 0)
    }

    @Test func aSubscriberOfEveryKindGetsEachEventInOrder() {
        let bus = EventBus()
        let received = Received()
        _ = bus.subscribe { received.append($0) }
        let builds = Builds()
        bus.publish(.created, builds.record(1))
        bus.publish(.progress, builds.record(1))
        bus.publish(.suspended, builds.record(1))
        bus.publish(.resumed, builds.record(1))
        bus.publish(.completed, builds.record(1))
        #expect(received.all == ["created #1", "progress #1", "suspended #1", "resumed #1", "completed #1"])
        #expect(builds.made == 5)
    }

    /// The journal logger wants `completed` only: a `created` it does not want is not even built.
    @Test func aSubscriberGetsOnlyTheKindsItNamed() {
        let bus = EventBus()
        let received = Received()
        _ = bus.subscribe([.completed]) { received.append($0) }
        #expect(bus.hasSubscribers(for: .completed))
        #expect(!bus.hasSubscribers(for: .created))
        let builds = Builds()
        bus.publish(.created, builds.record(1))
        bus.publish(.progress, builds.record(1))
        bus.publish(.completed, builds.record(1))
        #expect(received.all == ["completed #1"])
        #expect(builds.made == 1)
    }

    @Test func severalSubscribersShareOneRecordAndEachGetsItsKinds() {
        let bus = EventBus()
        let everything = Received()
        let ends = Received()
        let pauses = Received()
        _ = bus.subscribe { everything.append($0) }
        _ = bus.subscribe([.completed]) { ends.append($0) }
        _ = bus.subscribe([.suspended, .resumed]) { pauses.append($0) }
        let builds = Builds()
        bus.publish(.created, builds.record(3))
        bus.publish(.suspended, builds.record(3))
        bus.publish(.resumed, builds.record(3))
        bus.publish(.completed, builds.record(3))
        #expect(everything.all == ["created #3", "suspended #3", "resumed #3", "completed #3"])
        #expect(ends.all == ["completed #3"])
        #expect(pauses.all == ["suspended #3", "resumed #3"])
        #expect(builds.made == 4)  // once an event, not once a subscriber
    }

    @Test func anUnsubscribedSubscriberGetsNothingMoreAndItsKindsAreNoLongerWanted() {
        let bus = EventBus()
        let stays = Received()
        let leaves = Received()
        let stayToken = bus.subscribe([.completed]) { stays.append($0) }
        let leaveToken = bus.subscribe([.created, .completed]) { leaves.append($0) }
        #expect(stayToken != leaveToken)
        let builds = Builds()
        bus.publish(.created, builds.record(1))
        bus.unsubscribe(leaveToken)
        #expect(!bus.hasSubscribers(for: .created))
        #expect(bus.hasSubscribers(for: .completed))  // still wanted by the other one
        bus.publish(.created, builds.record(2))
        bus.publish(.completed, builds.record(2))
        #expect(leaves.all == ["created #1"])
        #expect(stays.all == ["completed #2"])
        #expect(builds.made == 2)  // the second `created` was wanted by nobody

        bus.unsubscribe(stayToken)
        for kind in [TaskEvent.Kind.created, .suspended, .resumed, .progress, .completed] {
            #expect(!bus.hasSubscribers(for: kind))
        }
        bus.publish(.completed, builds.record(3))
        #expect(builds.made == 2)
    }

    /// The lists of who wants each kind are worked out at each change, not at each event: they
    /// follow every subscribe and unsubscribe, in the order of subscription.
    @Test func subscribersAreCalledInTheOrderTheySubscribedThroughChanges() {
        let bus = EventBus()
        let order = Mutex<[String]>([])
        let first = bus.subscribe([.completed]) { _ in order.withLock { $0.append("first") } }
        _ = bus.subscribe { _ in order.withLock { $0.append("second") } }
        _ = bus.subscribe([.completed, .created]) { _ in order.withLock { $0.append("third") } }
        bus.publish(.completed, Builds().record(1))
        bus.publish(.created, Builds().record(1))
        #expect(order.withLock { $0 } == ["first", "second", "third", "second", "third"])
        bus.unsubscribe(first)
        _ = bus.subscribe([.completed]) { _ in order.withLock { $0.append("fourth") } }
        order.withLock { $0 = [] }
        bus.publish(.completed, Builds().record(2))
        #expect(order.withLock { $0 } == ["second", "third", "fourth"])
    }

    @Test func unsubscribingAnUnknownTokenChangesNothing() {
        let bus = EventBus()
        let received = Received()
        let token = bus.subscribe([.progress]) { received.append($0) }
        bus.unsubscribe(token + 1000)
        #expect(bus.hasSubscribers(for: .progress))
        bus.publish(.progress, Builds().record(8))
        bus.unsubscribe(token)
        bus.unsubscribe(token)  // twice: no harm
        #expect(!bus.hasSubscribers(for: .progress))
        let again = bus.subscribe([.progress]) { received.append($0) }
        #expect(again != token)  // a token is not given out twice
        bus.publish(.progress, Builds().record(9))
        #expect(received.all == ["progress #8", "progress #9"])
    }
}

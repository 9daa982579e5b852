import AFProxyManager
import AFProxyModel
import FoundationEssentials
import Synchronization
import Testing

/// Network events on the bus: the stream gets them between task events; task subscribers never do.
@Suite struct EventBusNetworkTests {
    private final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { self.lines.withLock { $0.append(line) } }
        var all: [String] { self.lines.withLock { $0 } }
    }

    private func record(_ id: Int) -> TaskRecord {
        TaskRecord(
            id: id, kind: .data, state: .running, method: "GET", url: "http://h/", client: "c",
            createdAt: Date(timeIntervalSince1970: 0))
    }

    @Test func theStreamGetsNetworkEventsInOrderWithTaskEvents() {
        let bus = EventBus()
        let stream = Lines()
        let tasks = Lines()
        _ = bus.subscribeStream { event in
            switch event {
            case .task(let taskEvent): stream.append("\(taskEvent.event.rawValue) #\(taskEvent.task.id)")
            case .network(let networkEvent):
                stream.append("\(networkEvent.event.rawValue) \(networkEvent.network.status)")
            case .missed(let missed): stream.append("missed \(missed.missed)")
            }
        }
        _ = bus.subscribe { tasks.append("\($0.event.rawValue) #\($0.task.id)") }
        bus.publish(.created, self.record(1))
        bus.publishNetwork(.networkLost, Reachability(status: .unreachable))
        bus.publishNetwork(.networkRestored, Reachability(status: .reachable, interface: "eth0"))
        bus.publish(.completed, self.record(1))
        #expect(stream.all == ["created #1", "network-lost unreachable", "network-restored reachable", "completed #1"])
        #expect(tasks.all == ["created #1", "completed #1"])
    }

    @Test func aStreamSubscriberWantsEveryTaskKindAndUnsubscribingEndsIt() {
        let bus = EventBus()
        let stream = Lines()
        let token = bus.subscribeStream { _ in stream.append("event") }
        for kind in TaskEvent.Kind.allCases { #expect(bus.hasSubscribers(for: kind)) }
        bus.unsubscribe(token)
        bus.publishNetwork(.networkLost, Reachability(status: .unreachable))
        #expect(stream.all.isEmpty)
        #expect(!bus.hasSubscribers(for: .created))
    }
}

import AFProxyModel
import AFProxyTestSupport
import Testing

@testable import AFProxyManager

/// `taskCounts()`: what the metrics read at scrape time instead of a `created` subscription.
@Suite struct SessionManagerCountsTests {
    private final class SilentClient: TaskClient, Sendable {
        func task(_ task: HTTPTask, deliver delivery: ResponseDelivery) {}
        func taskWantsRequestBody(_ task: HTTPTask) {}
        func taskAwaitsRequestBody(_ task: HTTPTask) {}
        func task(_ task: HTTPTask, didChangeSuspension suspended: Bool) {}
    }

    @Test func startedByKindStaysAfterCompletionLiveByKindAndState() throws {
        let manager = SessionManager(transport: InMemoryTransport(), historyCapacity: 4)
        let client = SilentClient()
        let request = ProxyRequest(method: "GET", url: "http://origin.test/", headers: [], body: .none, client: "c")
        let first = manager.startTask(request, client: client)
        let second = manager.startTask(request, client: client)
        _ = try manager.suspend(id: second.id)
        var counts = manager.taskCounts()
        #expect(counts.started == [.data: 2])
        #expect(counts.live == [.data: [.running: 1, .suspended: 1]])
        first.transfer(first.transfer, didCompleteWith: .failure(.canceled()), metrics: TaskMetrics())
        counts = manager.taskCounts()
        #expect(counts.started == [.data: 2])
        #expect(counts.live == [.data: [.suspended: 1]])
    }
}

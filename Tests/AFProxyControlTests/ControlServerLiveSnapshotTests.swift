import AFProxyAPI
import AFProxyManager
import AFProxyModel
import AFProxyTestSupport
import Foundation
import NIOEmbedded
import Testing

@testable import AFProxyControl

/// The snapshot the dashboard's page carries: every live id, but only the oldest tasks' records,
/// so the page stays small with thousands of live tasks. Tasks come from a session manager whose
/// session thread never runs.
@Suite struct ControlServerLiveSnapshotTests {
    private final class IdleClient: TaskClient, @unchecked Sendable {
        func task(_ task: HTTPTask, deliver delivery: ResponseDelivery) {}
        func taskWantsRequestBody(_ task: HTTPTask) {}
        func taskAwaitsRequestBody(_ task: HTTPTask) {}
        func task(_ task: HTTPTask, didChangeSuspension suspended: Bool) {}
    }

    private let manager = SessionManager(transport: InMemoryTransport(), historyCapacity: 4)
    private let client = IdleClient()

    private func server() -> ControlServer {
        ControlServer(manager: self.manager, group: EmbeddedEventLoop()) { stats in stats.served = 42 }
    }

    private func start(_ count: Int) -> [Int] {
        (0..<count).map { index in
            let request = ProxyRequest(
                method: "GET", url: "http://origin.test/\(index)", headers: [], body: .none, client: "c")
            return self.manager.startTask(request, client: self.client).id
        }
    }

    private func decode(_ json: [UInt8]) throws -> LiveSnapshot {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(LiveSnapshot.self, from: Data(json))
    }

    @Test func beyondTheLimitOnlyTheOldestRecordsButEveryLiveId() throws {
        let ids = self.start(150)
        let snapshot = try self.decode(self.server().liveSnapshotJSON(limit: 100))
        #expect(snapshot.event == "snapshot")
        #expect(Set(snapshot.live) == Set(ids))
        #expect(snapshot.tasks.map(\.id) == Array(ids.sorted().prefix(100)))
        #expect(snapshot.tasks.first?.url == "http://origin.test/0")
        #expect(snapshot.completed.isEmpty && snapshot.completedNotShown == 0)
        #expect(snapshot.stats.served == 42)  // the daemon's own totals are added
    }

    @Test func withinTheLimitEveryRecord() throws {
        let ids = self.start(3)
        let snapshot = try self.decode(self.server().liveSnapshotJSON(limit: 100))
        #expect(Set(snapshot.tasks.map(\.id)) == Set(ids))
        #expect(Set(snapshot.live) == Set(ids))
    }
}

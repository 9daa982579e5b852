import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct LiveSnapshotJSONTests {
    private func encoded(_ snapshot: LiveSnapshot) throws -> String {
        let encoder = JSONEncoder.api()
        return String(decoding: try encoder.encode(snapshot), as: UTF8.self)
    }

    private func written(_ snapshot: LiveSnapshot) -> String {
        var out: [UInt8] = []
        snapshot.writeJSON(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private func record(_ id: Int, state: TaskState = .running) -> TaskRecord {
        TaskRecord(
            id: id, kind: .data, state: state, method: "GET", url: "http://h/\(id)?q=\"x\"", client: "c",
            createdAt: Date(timeIntervalSince1970: 1_795_000_000), status: 200,
            download: TransferProgress(completed: 1024, total: 4096),
            requestHeaders: [.init("Host", "h"), .init("X-Odd", "a\\b/c")])
    }

    @Test func writesWhatTheEncoderWrites() throws {
        var stats = SessionStats()
        stats.live = 2
        stats.byState = ["running": 1, "suspended": 1]
        stats.byKind = ["data": 2]
        stats.served = 9
        stats.failed = 1
        stats.bytesDown = 1 << 33
        stats.uptimeSeconds = 12.5
        // A date in the totals: they go through the API's encoder, dates as ISO 8601 like `/v1/stats`.
        stats.network = Reachability(
            status: .reachable, interface: "eth0", interfaceKind: "ethernet",
            changedAt: Date(timeIntervalSince1970: 1_795_000_000))
        for snapshot in [
            LiveSnapshot(tasks: [], live: [], completed: [], completedNotShown: 0, stats: SessionStats()),
            LiveSnapshot(
                tasks: [self.record(3), self.record(5)], live: [3, 5, 8],
                completed: [self.record(2, state: .completed)], completedNotShown: 17, stats: stats),
        ] {
            #expect(self.written(snapshot) == (try self.encoded(snapshot)))
        }
    }
}

import AFProxyAPI
import AFProxyModel

extension ControlServer {
    /// A `GET /v1/live` line as the first would be now, but with only the `limit` oldest live
    /// tasks' records (every live id in `live`, and the totals). The dashboard's page carries it:
    /// its first screenful is drawn from it with no request after the page, and the whole list
    /// comes with the feed's first line. The whole list in the page made the page several times
    /// larger and its first screenful later.
    package func liveSnapshotJSON(limit: Int) -> [UInt8] {
        let records = self.manager.tasks(includeHistory: false)
        var stats = self.manager.stats()
        self.extraStats(&stats)
        let shown = records.count > limit ? Array(records.sorted { $0.id < $1.id }.prefix(limit)) : records
        let snapshot = LiveSnapshot(
            tasks: shown, live: records.map(\.id), completed: [], completedNotShown: 0, stats: stats)
        var json: [UInt8] = []
        json.reserveCapacity(shown.count * 1024 + records.count * 8 + 512)
        snapshot.writeJSON(to: &json)
        return json
    }
}

import AFProxyModel

extension ControlServer {
    /// The first line `GET /v1/live` would send now: every live task and the totals. The
    /// dashboard's page carries it, so its first list needs no request after the page.
    package func liveSnapshotJSON() -> [UInt8] {
        let records = self.manager.tasks(includeHistory: false)
        var stats = self.manager.stats()
        self.extraStats(&stats)
        let snapshot = LiveSnapshot(
            tasks: records, live: records.map(\.id), completed: [], completedNotShown: 0, stats: stats)
        var json: [UInt8] = []
        json.reserveCapacity(records.count * 1024 + 512)
        snapshot.writeJSON(to: &json)
        return json
    }
}

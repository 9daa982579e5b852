import AFProxyModel

extension SessionManager {
    /// Plain counts for the metrics, read at scrape time: tasks started since start by kind, and
    /// the live tasks by kind and state (no record is built for them).
    package func taskCounts() -> (started: [TaskKind: Int], live: [TaskKind: [TaskState: Int]]) {
        let (started, live) = self.registry.startedByKind()
        var counts: [TaskKind: [TaskState: Int]] = [:]
        for task in live { counts[task.kind, default: [:]][task.state, default: 0] += 1 }
        return (started, counts)
    }
}

extension SessionManager {
    /// Live tasks other than downloads: what a stop waits for (downloads are parked instead).
    package var liveProxiedCount: Int {
        self.registry.liveTasks.filter { $0.kind != .download }.count
    }
}

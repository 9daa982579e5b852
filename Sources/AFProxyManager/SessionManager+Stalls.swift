import AFProxyModel

extension SessionManager {
    /// One sweep of the safety net (`StallWatch`): ends every HTTP task that has had no client and
    /// moved no byte for longer than `limit` with `stalled`, and answers their records as they
    /// were before the end, for the defect log. Cheap (a look at each live task's counts), so the
    /// daemon runs it every few seconds; it never blocks.
    package func endStalledTasks(limit: Duration, now: ContinuousClock.Instant = .now) -> [TaskRecord] {
        let orphans = self.registry.liveTasks.compactMap { $0 as? HTTPTask }.filter(\.clientGone)
        let candidates = orphans.map { StallWatch.Candidate(id: $0.id, bytes: $0.bytesUp + $0.bytesDown) }
        let stalled = Set(self.stallWatch.withLock { $0.sweep(candidates, now: now, limit: limit) })
        return orphans.filter { stalled.contains($0.id) }.map { task in
            let record = task.record()
            task.endStalled(
                .stalled(
                    "ended by the safety net: no client and no progress for \(limit.components.seconds) s (a defect; please report it)"
                ))
            return record
        }
    }
}

import AFProxyManager

extension DaemonService {
    /// How often the safety net looks: a task it catches has been stuck for at least the upstream
    /// timeout already, so a few seconds more do not matter, and a sweep costs next to nothing.
    static let stallSweepInterval = Duration.seconds(5)

    /// The safety net (`SessionManager.endStalledTasks`): every few seconds, ends the tasks that
    /// have had no client and no progress for longer than the upstream timeout, each logged as
    /// the defect it is. The `stalled` outcome counts them in /metrics.
    func sweepStalledTasks() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.stallSweepInterval)
            let limit = Duration.seconds(self.session.configuration.idleTimeout.components.seconds)
            for record in self.manager.endStalledTasks(limit: limit) {
                self.logger.error(
                    "defect: task \(record.id) (\(record.method) \(record.url), \(record.state.rawValue), \(record.upload.completed) bytes up, \(record.download.completed) down) had no client and no progress for \(limit.components.seconds) s; ended as stalled"
                )
            }
        }
    }
}

import AFProxyModel
import Logging

/// SIGTERM or SIGINT, in the steps of `Daemon.stopSequence`: STOPPING=1; (the proxy stops
/// accepting;) running tasks get `grace-period` seconds to finish, what is left is canceled; (the
/// control socket, the metrics port and the dashboard close;) the session thread stops. Download
/// tasks are neither waited for nor canceled: they stay in the journal as they are and continue
/// at the next start. The control socket stays open during the grace period, so `afproxyctl
/// list` shows what is draining.
extension DaemonService {
    /// The first step, before any socket closes.
    func announceStop() {
        let grace = self.state.withLock { state in
            state.stopping = true
            return state.configuration.gracePeriod
        }
        let live = self.manager.liveProxiedCount
        self.notifyStatus(.stopping)
        self.logger.notice(
            "stopping: no new connections; \(live) running task(s) get up to \(Self.seconds(grace)) s to finish")
    }

    var isStopping: Bool { self.state.withLock { $0.stopping } }

    /// Once the proxy accepts no more: the grace period, then what is left is canceled, downloads
    /// parked, holds written and the network watcher stopped.
    func drain() async {
        let grace = self.state.withLock { $0.configuration.gracePeriod }
        self.cancelHeldTasks()

        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(grace * 1000))
        await self.waitUntilIdle(until: deadline)
        let left = self.manager.tasks(includeHistory: false).filter { $0.state != .completed && $0.kind != .download }
        if !left.isEmpty {
            self.logger.notice("grace period over: canceling \(left.count) task(s)")
            for task in left { _ = try? self.manager.cancel(id: task.id) }
            await self.waitUntilIdle(until: clock.now + .seconds(2))
        }
        self.manager.downloads.park()
        self.manager.flushStateFiles()
        self.network.stop()
    }

    /// Waits until no task is live, the deadline passes or this task is canceled.
    private func waitUntilIdle(until deadline: ContinuousClock.Instant) async {
        while self.manager.liveProxiedCount > 0, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

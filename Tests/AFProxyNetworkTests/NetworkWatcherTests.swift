import AFProxyModel
import Testing

@testable import AFProxyNetwork

#if canImport(Glibc)
import Glibc
#endif

/// The watcher against this machine's kernel: it answers (reachable or not, never unknown for
/// long) and stops cleanly. The decision itself is tested with tables in ReachabilityDecisionTests.
@Suite struct NetworkWatcherTests {
    @Test func theKernelsFirstAnswerIsReportedAndStopEndsTheThread() throws {
        let reports = Locked<[Reachability]>([])
        let watcher = NetworkWatcher { reachability in reports.withLock { $0.append(reachability) } }
        try watcher.start()
        for _ in 0..<100 where reports.withLock({ $0.isEmpty }) { usleep(50_000) }
        watcher.stop()
        let first = try #require(reports.withLock { $0.first })
        #expect(first.status != .unknown)
        #expect(first.changedAt != nil)
        #expect((first.status == .reachable) == (first.interface != nil))
        #expect(watcher.reachability == reports.withLock { $0.last })
    }
}

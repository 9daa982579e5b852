import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyCLI

/// `afproxyctl status`'s network line for an unknown status: not answered yet, or no longer
/// followed because the daemon's watcher failed (issue 22).
@Suite struct ReachabilityTextTests {
    @Test func unknownBeforeTheFirstAnswer() {
        #expect(ReachabilityText.describe(.unknown) == "unknown (the daemon has no answer from the kernel)")
    }

    @Test func unknownBecauseTheWatcherFailedSaysWhy() {
        let failed = Reachability(
            status: .unknown, changedAt: Date(timeIntervalSince1970: 0), reason: "the netlink socket failed: EBADF")
        #expect(
            ReachabilityText.describe(failed)
                == "unknown (no longer followed: the netlink socket failed: EBADF) since 1970-01-01T00:00:00Z")
    }
}

import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyNetwork

/// A watcher whose netlink socket failed (issue 22): the status becomes `unknown` with the
/// reason, reported once, and stays so whatever decision might still come; never "reachable".
@Suite struct ReachabilityFailureTests {
    let eth0 = NetworkLink(index: 2, name: "eth0", flags: NetlinkFixtures.up)
    let t0 = Date(timeIntervalSince1970: 1_000)
    let t1 = Date(timeIntervalSince1970: 2_000)
    let reason = "the netlink socket failed: recvmsg(netlink): No buffer space available"

    @Test func aFailureWhileReachableIsReportedAsUnknownWithItsReason() {
        var tracker = ReachabilityTracker()
        _ = tracker.update(.init(status: .reachable, link: self.eth0), kind: .ethernet, now: self.t0)
        let reported = tracker.failed(self.reason, now: self.t1)
        #expect(reported == Reachability(status: .unknown, changedAt: self.t1, reason: self.reason))
        #expect(tracker.current.status == .unknown)
    }

    @Test func aFailureIsReportedOnce() {
        var tracker = ReachabilityTracker()
        #expect(tracker.failed(self.reason, now: self.t0) != nil)
        #expect(tracker.failed("again", now: self.t1) == nil)
        #expect(tracker.current.reason == self.reason)
    }

    @Test func nothingChangesTheStatusAfterAFailure() {
        var tracker = ReachabilityTracker()
        _ = tracker.failed(self.reason, now: self.t0)
        #expect(tracker.update(.init(status: .reachable, link: self.eth0), kind: .ethernet, now: self.t1) == nil)
        #expect(tracker.current.status == .unknown)
    }

    @Test func aFailureBeforeAnyAnswerStillSaysWhy() {
        var tracker = ReachabilityTracker()
        #expect(tracker.failed(self.reason, now: self.t0)?.reason == self.reason)
    }
}

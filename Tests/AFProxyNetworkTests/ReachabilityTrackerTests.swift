import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyNetwork

/// What is reported: only changes, and `changedAt` moves with the status alone.
@Suite struct ReachabilityTrackerTests {
    let eth0 = NetworkLink(index: 2, name: "eth0", flags: NetlinkFixtures.up)
    let wlan0 = NetworkLink(index: 3, name: "wlan0", flags: NetlinkFixtures.up)
    let t0 = Date(timeIntervalSince1970: 1_000)
    let t1 = Date(timeIntervalSince1970: 2_000)

    @Test func theFirstAnswerIsAChange() {
        var tracker = ReachabilityTracker()
        let reported = tracker.update(.init(status: .reachable, link: self.eth0), kind: .ethernet, now: self.t0)
        #expect(
            reported
                == Reachability(status: .reachable, interface: "eth0", interfaceKind: "ethernet", changedAt: self.t0))
    }

    @Test func theSameDecisionAgainReportsNothing() {
        var tracker = ReachabilityTracker()
        _ = tracker.update(.init(status: .reachable, link: self.eth0), kind: .ethernet, now: self.t0)
        #expect(tracker.update(.init(status: .reachable, link: self.eth0), kind: .ethernet, now: self.t1) == nil)
    }

    @Test func anotherInterfaceIsReportedButKeepsTheTimeOfTheStatusChange() {
        var tracker = ReachabilityTracker()
        _ = tracker.update(.init(status: .reachable, link: self.eth0), kind: .ethernet, now: self.t0)
        let reported = tracker.update(.init(status: .reachable, link: self.wlan0), kind: .wifi, now: self.t1)
        #expect(
            reported == Reachability(status: .reachable, interface: "wlan0", interfaceKind: "wifi", changedAt: self.t0))
    }

    @Test func losingTheNetworkClearsTheInterface() {
        var tracker = ReachabilityTracker()
        _ = tracker.update(.init(status: .reachable, link: self.eth0), kind: .ethernet, now: self.t0)
        let reported = tracker.update(.init(status: .unreachable), kind: nil, now: self.t1)
        #expect(reported == Reachability(status: .unreachable, changedAt: self.t1))
    }
}

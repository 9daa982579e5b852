import AFProxyModel
import CNetlink
import Testing

@testable import AFProxyNetwork

/// The decision from tables built by hand: which default routes count and which interface shows.
@Suite struct ReachabilityDecisionTests {
    let up = NetlinkFixtures.up
    let v4 = UInt8(AF_INET)
    let v6 = UInt8(AF_INET6)

    func decide(_ links: [NetworkLink], _ routes: [NetworkRoute]) -> ReachabilityDecision {
        ReachabilityDecision.decide(NetworkTables(links: links, routes: Set(routes)))
    }

    @Test func unknownUntilTheFirstDumpsFinish() {
        let tables = NetworkTables(
            links: [NetworkLink(index: 2, name: "eth0", flags: self.up)],
            routes: [NetworkRoute(family: self.v4, interfaces: [2])])
        #expect(ReachabilityDecision.decide(tables, synced: false).status == .unknown)
    }

    @Test func aDefaultRouteOverAnInterfaceThatIsUpIsReachable() {
        let eth0 = NetworkLink(index: 2, name: "eth0", flags: self.up)
        let decision = self.decide([eth0], [NetworkRoute(family: self.v4, interfaces: [2])])
        #expect(decision == ReachabilityDecision(status: .reachable, link: eth0))
    }

    @Test func anIPv6DefaultRouteAloneIsEnough() {
        let decision = self.decide(
            [NetworkLink(index: 2, name: "eth0", flags: self.up)], [NetworkRoute(family: self.v6, interfaces: [2])])
        #expect(decision.status == .reachable)
    }

    @Test func noDefaultRouteIsUnreachable() {
        #expect(self.decide([NetworkLink(index: 2, name: "eth0", flags: self.up)], []).status == .unreachable)
    }

    @Test func anInterfaceThatIsDownOrWithoutCarrierIsNotUp() {
        let route = NetworkRoute(family: self.v4, interfaces: [2])
        let adminDown = NetworkLink(index: 2, name: "eth0", flags: UInt32(IFF_RUNNING.rawValue))
        #expect(self.decide([adminDown], [route]).status == .unreachable)
        let noCarrier = NetworkLink(index: 2, name: "eth0", flags: UInt32(IFF_UP.rawValue))
        #expect(self.decide([noCarrier], [route]).status == .unreachable)
        let lowerDown = NetworkLink(
            index: 2, name: "eth0", flags: self.up, operationalState: UInt8(IF_OPER_LOWERLAYERDOWN))
        #expect(self.decide([lowerDown], [route]).status == .unreachable)
        let dormant = NetworkLink(index: 2, name: "wlan0", flags: self.up, operationalState: UInt8(IF_OPER_DORMANT))
        #expect(self.decide([dormant], [route]).status == .unreachable)
    }

    /// A tunnel or a dummy interface reports its operational state as unknown: up is enough.
    @Test func anOperationalStateOfUnknownCountsAsUp() {
        let tun = NetworkLink(
            index: 9, name: "tun0", flags: UInt32(IFF_UP.rawValue), operationalState: UInt8(IF_OPER_UNKNOWN))
        #expect(self.decide([tun], [NetworkRoute(family: self.v4, interfaces: [9])]).status == .reachable)
    }

    @Test func unreachableBlackholeAndOtherTablesDoNotCount() {
        let eth0 = NetworkLink(index: 2, name: "eth0", flags: self.up)
        let routes = [
            NetworkRoute(family: self.v6, type: UInt8(RTN_UNREACHABLE), interfaces: [2]),
            NetworkRoute(family: self.v4, type: UInt8(RTN_BLACKHOLE), interfaces: [2]),
            NetworkRoute(family: self.v4, table: 100, interfaces: [2]),
        ]
        #expect(self.decide([eth0], routes).status == .unreachable)
    }

    @Test func aRouteOverAnInterfaceWeDoNotKnowDoesNotCount() {
        #expect(self.decide([], [NetworkRoute(family: self.v4, interfaces: [2])]).status == .unreachable)
    }

    @Test func theLowestMetricChoosesTheInterface() {
        let eth0 = NetworkLink(index: 2, name: "eth0", flags: self.up)
        let wlan0 = NetworkLink(index: 3, name: "wlan0", flags: self.up)
        let routes = [
            NetworkRoute(family: self.v4, metric: 600, interfaces: [3]),
            NetworkRoute(family: self.v4, metric: 100, interfaces: [2]),
        ]
        #expect(self.decide([eth0, wlan0], routes).link == eth0)
    }

    @Test func onATieIPv4ComesBeforeIPv6() {
        let eth0 = NetworkLink(index: 2, name: "eth0", flags: self.up)
        let wwan0 = NetworkLink(index: 1, name: "wwan0", flags: self.up)
        let routes = [
            NetworkRoute(family: self.v6, metric: 100, interfaces: [1]),
            NetworkRoute(family: self.v4, metric: 100, interfaces: [2]),
        ]
        #expect(self.decide([eth0, wwan0], routes).link == eth0)
    }

    @Test func aBetterRouteOverAnInterfaceThatIsDownGivesWayToAWorseOne() {
        let eth0 = NetworkLink(index: 2, name: "eth0", flags: 0)
        let wlan0 = NetworkLink(index: 3, name: "wlan0", flags: self.up)
        let routes = [
            NetworkRoute(family: self.v4, metric: 100, interfaces: [2]),
            NetworkRoute(family: self.v4, metric: 600, interfaces: [3]),
        ]
        #expect(self.decide([eth0, wlan0], routes) == ReachabilityDecision(status: .reachable, link: wlan0))
    }
}

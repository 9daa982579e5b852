import CNetlink
import Testing

@testable import AFProxyNetwork

/// The byte layouts: nlmsghdr, ifinfomsg, rtmsg and rtattr, as the kernel sends them.
@Suite struct NetlinkParsingTests {
    typealias F = NetlinkFixtures

    @Test func aDatagramHoldsSeveralMessagesAndATruncatedTailIsDropped() {
        var bytes = F.message(type: Int32(RTM_NEWLINK), sequence: 7, F.linkPayload(index: 2, name: "eth0", flags: F.up))
        bytes += F.message(type: Int32(NLMSG_DONE), sequence: 7, [0, 0, 0, 0])
        bytes += F.message(type: Int32(RTM_NEWLINK), F.linkPayload(index: 3, name: "wlan0", flags: 0)).prefix(20)
        let messages = F.parse(bytes)
        #expect(messages.count == 2)
        #expect(messages[0].topic == .newLink)
        #expect(messages[0].sequence == 7)
        #expect(messages[1].isDone)
    }

    @Test func aLengthShorterThanTheHeaderStopsTheParse() {
        var bytes = F.message(type: Int32(NLMSG_DONE), [0, 0, 0, 0])
        bytes[0] = 3
        #expect(F.parse(bytes).isEmpty)
    }

    @Test func aLinkHasItsNameFlagsTypeAndOperationalState() throws {
        let payload = F.linkPayload(index: 5, name: "wlp2s0", flags: F.up, type: 1, operstate: 6)
        let link = try #require(NetworkLink(payload: payload[...]))
        #expect(link == NetworkLink(index: 5, name: "wlp2s0", flags: F.up, hardwareType: 1, operationalState: 6))
        #expect(link.isUp)
    }

    @Test func aLinkWithoutANameIsNotTaken() {
        var payload = F.linkPayload(index: 5, name: "x", flags: F.up)
        payload.removeLast(8)
        #expect(NetworkLink(payload: payload[...]) == nil)
    }

    @Test func aDefaultRouteHasItsInterfaceMetricAndTable() throws {
        let route = try #require(NetworkRoute(payload: F.routePayload(oif: 3, metric: 100)[...]))
        #expect(route == NetworkRoute(family: UInt8(AF_INET), table: 254, type: 1, metric: 100, interfaces: [3]))
    }

    @Test func aRouteToAPrefixIsNoDefaultRoute() {
        #expect(NetworkRoute(payload: F.routePayload(destinationLength: 24)[...]) == nil)
    }

    @Test func aTableAboveTwoHundredFiftyFiveComesFromItsAttribute() throws {
        var payload = F.routePayload(table: 252)
        payload += F.attribute(Int32(RTA_TABLE.rawValue), integer: UInt32(1000))
        #expect(try #require(NetworkRoute(payload: payload[...])).table == 1000)
    }

    @Test func aMultipathRouteGoesOutOverEachNextHop() throws {
        var hops: [UInt8] = []
        for index: Int32 in [4, 7] {
            F.append(UInt16(8), to: &hops)
            hops += [0, 0]
            F.append(index, to: &hops)
        }
        let payload = F.routePayload(family: AF_INET6, oif: nil) + F.attribute(Int32(RTA_MULTIPATH.rawValue), hops)
        #expect(try #require(NetworkRoute(payload: payload[...])).interfaces == [4, 7])
    }

    @Test func aDumpRequestIsAHeaderAndAnEmptyFamilyMessage() {
        let links = NetlinkRequest.dump(.links, sequence: 9)
        #expect(links.count == 32)
        let parsed = F.parse(links)
        #expect(parsed.count == 1)
        #expect(parsed[0].type == UInt16(RTM_GETLINK))
        #expect(parsed[0].flags == UInt16(NLM_F_REQUEST | NLM_F_DUMP))
        #expect(parsed[0].sequence == 9)
        let routes = NetlinkRequest.dump(.routes(family: UInt8(AF_INET6)), sequence: 10)
        #expect(routes.count == 28)
        #expect(F.parse(routes)[0].payload.first == UInt8(AF_INET6))
    }
}

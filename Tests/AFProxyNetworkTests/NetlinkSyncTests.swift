import CNetlink
import Testing

@testable import AFProxyNetwork

/// The conversation: dumps one at a time, synced after the first three, notifications applied,
/// and the routes asked again when a link or an address changes.
@Suite struct NetlinkSyncTests {
    typealias F = NetlinkFixtures

    func feed(_ sync: inout NetlinkSync, _ bytes: [UInt8]) {
        for message in F.parse(bytes) { sync.receive(message) }
    }

    func done(_ sequence: UInt32) -> [UInt8] {
        F.message(type: Int32(NLMSG_DONE), sequence: sequence, [0, 0, 0, 0])
    }

    /// Links, then IPv4 routes, then IPv6 routes; synced once all three are answered.
    func synced() -> NetlinkSync {
        var sync = NetlinkSync()
        let links = sync.nextRequest()!
        self.feed(
            &sync,
            F.message(
                type: Int32(RTM_NEWLINK), sequence: links.sequence, F.linkPayload(index: 2, name: "eth0", flags: F.up))
                + self.done(links.sequence))
        let v4 = sync.nextRequest()!
        self.feed(
            &sync,
            F.message(type: Int32(RTM_NEWROUTE), sequence: v4.sequence, F.routePayload(oif: 2)) + self.done(v4.sequence)
        )
        let v6 = sync.nextRequest()!
        self.feed(&sync, self.done(v6.sequence))
        return sync
    }

    @Test func theDumpsGoOneAtATimeAndTheFirstPictureIsCompleteAfterTheThird() {
        var sync = NetlinkSync()
        let first = sync.nextRequest()
        #expect(first?.dump == .links)
        #expect(sync.nextRequest() == nil)
        self.feed(&sync, self.done(first!.sequence))
        #expect(!sync.isSynced)
        let second = sync.nextRequest()
        #expect(second?.dump == .routes(family: UInt8(AF_INET)))
        self.feed(&sync, self.done(second!.sequence))
        let third = sync.nextRequest()
        #expect(third?.dump == .routes(family: UInt8(AF_INET6)))
        #expect(!sync.isSynced)
        self.feed(&sync, self.done(third!.sequence))
        #expect(sync.isSynced)
        #expect(sync.nextRequest() == nil)
    }

    @Test func aDumpFillsTheTables() {
        let sync = self.synced()
        #expect(ReachabilityDecision.decide(sync.tables, synced: sync.isSynced).status == .reachable)
    }

    /// IPv6 disabled: the kernel answers the family's dump with an error, which ends it.
    @Test func anErrorEndsADump() {
        var sync = NetlinkSync()
        for _ in 0..<3 {
            let request = sync.nextRequest()!
            self.feed(&sync, F.message(type: Int32(NLMSG_ERROR), sequence: request.sequence, [0x9f, 0xff, 0xff, 0xff]))
        }
        #expect(sync.isSynced)
        #expect(ReachabilityDecision.decide(sync.tables, synced: sync.isSynced).status == .unreachable)
    }

    @Test func aLinkGoingDownIsSeenAndTheRoutesAreAskedAgain() {
        var sync = self.synced()
        self.feed(&sync, F.message(type: Int32(RTM_NEWLINK), F.linkPayload(index: 2, name: "eth0", flags: 0)))
        #expect(ReachabilityDecision.decide(sync.tables).status == .unreachable)
        #expect(sync.nextRequest()?.dump == .routes(family: UInt8(AF_INET)))
    }

    /// The kernel flushed the route without a RTM_DELROUTE: the new dump drops it.
    @Test func aRouteDumpReplacesTheRoutesOfItsFamily() {
        var sync = self.synced()
        self.feed(&sync, F.message(type: Int32(RTM_NEWADDR), [UInt8](repeating: 0, count: 8)))
        let v4 = sync.nextRequest()!
        self.feed(&sync, self.done(v4.sequence))
        #expect(ReachabilityDecision.decide(sync.tables).status == .unreachable)
    }

    @Test func routeNotificationsAddAndRemove() {
        var sync = self.synced()
        self.feed(&sync, F.message(type: Int32(RTM_DELROUTE), F.routePayload(oif: 2)))
        #expect(ReachabilityDecision.decide(sync.tables).status == .unreachable)
        self.feed(&sync, F.message(type: Int32(RTM_NEWROUTE), F.routePayload(family: AF_INET6, oif: 2)))
        #expect(ReachabilityDecision.decide(sync.tables).status == .reachable)
        // A route notification asks for no dump.
        #expect(sync.nextRequest() == nil)
    }

    @Test func lostMessagesAskForEverythingAgain() {
        var sync = self.synced()
        sync.lostMessages()
        #expect(sync.nextRequest()?.dump == .links)
    }
}

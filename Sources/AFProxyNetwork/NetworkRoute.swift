import CNetlink

/// A default route (destination prefix length 0) as `RTM_NEWROUTE` describes it (`struct rtmsg`
/// and its attributes). Other routes are not kept: only a default route says the wider network
/// can be reached. Its table and type are kept so that the decision, not the parser, says which
/// count.
package struct NetworkRoute: Sendable, Hashable {
    /// `AF_INET` or `AF_INET6`.
    package var family: UInt8
    /// `RT_TABLE_*`; 254 is main.
    package var table: UInt32
    /// `RTN_*`; 1 is unicast, 6 blackhole, 7 unreachable.
    package var type: UInt8
    /// `RTA_PRIORITY`, the metric; lower wins.
    package var metric: UInt32
    /// Output interfaces: `RTA_OIF`, or each next hop's of a multipath route.
    package var interfaces: [Int32]
    /// `RTA_GATEWAY`, raw; part of what tells two routes apart.
    package var gateway: [UInt8]

    package init(
        family: UInt8, table: UInt32 = UInt32(RT_TABLE_MAIN.rawValue), type: UInt8 = UInt8(RTN_UNICAST),
        metric: UInt32 = 0, interfaces: [Int32], gateway: [UInt8] = []
    ) {
        self.family = family
        self.table = table
        self.type = type
        self.metric = metric
        self.interfaces = interfaces
        self.gateway = gateway
    }

    /// `rtmsg` is 12 bytes: family, dst_len, src_len, tos, table, protocol, scope, type, flags (u32).
    static let headerSize = 12

    /// The default route in a `RTM_NEWROUTE` / `RTM_DELROUTE` payload; nil for any other route.
    init?(payload: ArraySlice<UInt8>) {
        guard payload.count >= Self.headerSize, let family = payload.integer(at: 0, as: UInt8.self),
            let destinationLength = payload.integer(at: 1, as: UInt8.self),
            let shortTable = payload.integer(at: 4, as: UInt8.self),
            let type = payload.integer(at: 7, as: UInt8.self),
            destinationLength == 0, family == UInt8(AF_INET) || family == UInt8(AF_INET6)
        else { return nil }
        let attributes = NetlinkAttributes(payload.tail(from: Self.headerSize))
        var interfaces: [Int32] = []
        if let oif = attributes.integer(Int32(RTA_OIF.rawValue), as: Int32.self) {
            interfaces.append(oif)
        } else if let hops = attributes[Int32(RTA_MULTIPATH.rawValue)] {
            interfaces = Self.nextHopInterfaces(hops)
        }
        self.init(
            family: family,
            // A table above 255 does not fit the header's byte: RTA_TABLE carries it.
            table: attributes.integer(Int32(RTA_TABLE.rawValue)) ?? UInt32(shortTable),
            type: type, metric: attributes.integer(Int32(RTA_PRIORITY.rawValue)) ?? 0, interfaces: interfaces,
            gateway: Array(attributes[Int32(RTA_GATEWAY.rawValue)] ?? []))
    }

    /// `struct rtnexthop` entries (length u16, flags u8, hops u8, ifindex i32, then attributes).
    private static func nextHopInterfaces(_ bytes: ArraySlice<UInt8>) -> [Int32] {
        var interfaces: [Int32] = []
        var offset = 0
        while let length = bytes.integer(at: offset, as: UInt16.self).map(Int.init), length >= 8,
            offset + length <= bytes.count, let index = bytes.integer(at: offset + 4, as: Int32.self)
        {
            interfaces.append(index)
            offset += netlinkAligned(length)
        }
        return interfaces
    }
}

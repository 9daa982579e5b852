import CNetlink

/// The bytes of a dump request: `nlmsghdr` with `NLM_F_REQUEST | NLM_F_DUMP`, then an empty
/// `ifinfomsg` (every link) or an `rtmsg` naming the family (every route of it).
enum NetlinkRequest {
    static func dump(_ dump: NetlinkSync.Dump, sequence: UInt32) -> [UInt8] {
        let type: Int32
        var body: [UInt8]
        switch dump {
        case .links:
            type = Int32(RTM_GETLINK)
            body = [UInt8](repeating: 0, count: NetworkLink.headerSize)
        case .routes(let family):
            type = Int32(RTM_GETROUTE)
            body = [UInt8](repeating: 0, count: NetworkRoute.headerSize)
            body[0] = family
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(NetlinkMessage.headerSize + body.count)
        Self.append(UInt32(NetlinkMessage.headerSize + body.count), to: &bytes)
        Self.append(UInt16(type), to: &bytes)
        Self.append(UInt16(NLM_F_REQUEST | NLM_F_DUMP), to: &bytes)
        Self.append(sequence, to: &bytes)
        Self.append(UInt32(0), to: &bytes)  // port id: the kernel fills in ours
        return bytes + body
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }
}

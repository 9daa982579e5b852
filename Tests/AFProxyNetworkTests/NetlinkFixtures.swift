import CNetlink

@testable import AFProxyNetwork

/// Kernel messages built byte by byte, as the kernel lays them out, for the parser and the sync.
enum NetlinkFixtures {
    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }

    static func attribute(_ type: Int32, _ value: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        append(UInt16(4 + value.count), to: &bytes)
        append(UInt16(type), to: &bytes)
        bytes += value
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func attribute<T: FixedWidthInteger>(_ type: Int32, integer: T) -> [UInt8] {
        var value: [UInt8] = []
        append(integer, to: &value)
        return attribute(type, value)
    }

    static func message(type: Int32, sequence: UInt32 = 0, flags: UInt16 = 0, _ payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        append(UInt32(16 + payload.count), to: &bytes)
        append(UInt16(type), to: &bytes)
        append(flags, to: &bytes)
        append(sequence, to: &bytes)
        append(UInt32(0), to: &bytes)
        bytes += payload
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func linkPayload(
        index: Int32, name: String, flags: UInt32, type: UInt16 = 1, operstate: UInt8? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [0, 0]
        append(type, to: &bytes)
        append(index, to: &bytes)
        append(flags, to: &bytes)
        append(UInt32(0), to: &bytes)
        bytes += attribute(Int32(IFLA_IFNAME), Array(name.utf8) + [0])
        if let operstate { bytes += attribute(Int32(IFLA_OPERSTATE), [operstate]) }
        return bytes
    }

    static func routePayload(
        family: Int32 = AF_INET, destinationLength: UInt8 = 0, table: UInt8 = 254, type: UInt8 = 1,
        oif: Int32? = 2, metric: UInt32? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(family), destinationLength, 0, 0, table, 4, 0, type]
        append(UInt32(0), to: &bytes)
        if let oif { bytes += attribute(Int32(RTA_OIF.rawValue), integer: oif) }
        if let metric { bytes += attribute(Int32(RTA_PRIORITY.rawValue), integer: metric) }
        return bytes
    }

    static func parse(_ bytes: [UInt8]) -> [NetlinkMessage] {
        NetlinkMessage.parse(bytes[...])
    }

    static let up = UInt32(IFF_UP.rawValue | IFF_RUNNING.rawValue)
}

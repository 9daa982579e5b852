import AFProxyModel
import Testing

@testable import AFProxyNetwork

/// Lines of /proc/net/tcp and tcp6 as the kernel prints them (x86-64, little-endian words).
@Suite struct SocketTableTests {
    static let heading =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
    static let v4 = """
        \(heading)
           0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 24177 1 0000000000000000 100 0 0 10 0
           1: 0100007F:A0B2 0100007F:0CEA 01 00000000:00000000 00:00000000 00000000  1000        0 99881 1 0000000000000000 20 4 30 10 -1
           2: 0100007F:0CEA 0100007F:A0B2 01 00000000:00000000 00:00000000 00000000   998        0 99882 1 0000000000000000 20 4 30 10 -1
           3: 0100007F:A0B3 0100007F:0CEA 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000
        """
    static let v6 = """
        \(heading)
           0: 00000000000000000000000001000000:8AE2 00000000000000000000000001000000:0CEA 01 00000000:00000000 00:00000000 00000000   501        0 5150 1 0000000000000000 20 4 0 10 -1
           1: 0000000000000000FFFF00000100007F:8AE3 0000000000000000FFFF00000100007F:0CEA 01 00000000:00000000 00:00000000 00000000   502        0 5151 1 0000000000000000 20 4 0 10 -1
        """

    static func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: UInt16) -> ConnectionAddresses.Endpoint {
        .init(address: [a, b, c, d], port: port)
    }

    static let loopback6: [UInt8] = [UInt8](repeating: 0, count: 15) + [1]

    @Test func aLineGivesBothEndsTheOwnerAndTheInode() {
        let line = Self.v4.split(separator: "\n")[2]
        let entry = SocketTable.parse(line: line)
        #expect(entry?.local == Self.v4(127, 0, 0, 1, port: 0xA0B2))
        #expect(entry?.remote == Self.v4(127, 0, 0, 1, port: 3306))
        #expect(entry?.uid == 1000)
        #expect(entry?.inode == 99881)
    }

    @Test func theHeadingAndBrokenLinesAreNoEntries() {
        #expect(SocketTable.parse(line: Self.heading[...]) == nil)
        #expect(SocketTable.parse(line: "   0: 0100007F:XYZ 00000000:0000 0A 0 0 0 0 0 1") == nil)
        #expect(SocketTable.parse(line: "   0: 0100007F 00000000:0000 0A 0 0 0 0 0 1") == nil)
        #expect(SocketTable.parse(line: "") == nil)
    }

    @Test func theClientsEndIsTheOneWhoseOwnEndIsThePeer() {
        // The proxy (port 3306 here) accepted 127.0.0.1:41138; its own accepted socket is line 2.
        let found = SocketTable.find(
            client: Self.v4(127, 0, 0, 1, port: 0xA0B2), server: Self.v4(127, 0, 0, 1, port: 3306), in: Self.v4)
        #expect(found?.inode == 99881)
        #expect(found?.uid == 1000)
        let closed = SocketTable.find(
            client: Self.v4(127, 0, 0, 1, port: 0xA0B3), server: Self.v4(127, 0, 0, 1, port: 3306), in: Self.v4)
        #expect(closed?.inode == 0)
        let none = SocketTable.find(
            client: Self.v4(127, 0, 0, 1, port: 1), server: Self.v4(127, 0, 0, 1, port: 3306), in: Self.v4)
        #expect(none == nil)
    }

    @Test func ipv6AndMappedAddresses() {
        let found = SocketTable.find(
            client: .init(address: Self.loopback6, port: 0x8AE2), server: .init(address: Self.loopback6, port: 3306),
            in: Self.v6)
        #expect(found?.inode == 5150)
        // A dual-stack client socket connected to 127.0.0.1 is in tcp6, mapped; the proxy sees IPv4.
        let mapped = SocketTable.find(
            client: Self.v4(127, 0, 0, 1, port: 0x8AE3), server: Self.v4(127, 0, 0, 1, port: 3306), in: Self.v6)
        #expect(mapped?.inode == 5151)
        #expect(mapped?.uid == 502)
    }
}

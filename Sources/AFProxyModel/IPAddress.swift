#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as its network-order bytes: what host rules, client rules and the
/// private-destination check compare. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, what a
/// dual-stack socket reports for an IPv4 peer) is the IPv4 address, so one rule covers both.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    package let bytes: [UInt8]

    package var isIPv4: Bool { self.bytes.count == 4 }

    package init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self.bytes = bytes
        case 16 where bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF:
            self.bytes = Array(bytes[12...])
        case 16: self.bytes = bytes
        default: return nil
        }
    }

    /// A literal: `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`, `fe80::1%eth0` (the zone is
    /// dropped); nil for anything else, host names included.
    package init?(_ text: some StringProtocol) {
        var text = String(text)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let zone = text.firstIndex(of: "%"), text.contains(":") { text = String(text[..<zone]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        self.init(bytes: withUnsafeBytes(of: &v6) { Array($0) })
    }

    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = self.isIPv4 ? AF_INET : AF_INET6
        let text = self.bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard text != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// An address block in CIDR notation (`10.0.0.0/8`, `fd00::/8`, or one address, `/32` or `/128`
/// implied): `allow-clients`, host rules that name addresses, and the private-destination check.
package struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    package let address: IPAddress
    package let prefixLength: Int

    /// The address is kept with its host bits cleared, so `10.1.2.3/8` and `10.0.0.0/8` are equal.
    package init?(address: IPAddress, prefixLength: Int) {
        guard (0...address.bytes.count * 8).contains(prefixLength) else { return nil }
        var bytes = address.bytes
        for index in bytes.indices {
            let kept = max(0, min(8, prefixLength - index * 8))
            bytes[index] &= kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
        }
        guard let masked = IPAddress(bytes: bytes) else { return nil }
        self.address = masked
        self.prefixLength = prefixLength
    }

    /// `ADDRESS[/LENGTH]`; nil when it is not that.
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        // An IPv4-mapped IPv6 block (::ffff:10.0.0.0/104) is read as the IPv4 block it maps.
        let mappedOffset = address.isIPv4 && parts[0].contains(":") ? 96 : 0
        let length: Int
        if parts.count == 2 {
            guard parts[1].utf8.count <= 3, let given = Int(parts[1]), given >= mappedOffset else { return nil }
            length = given - mappedOffset
        } else {
            length = address.bytes.count * 8
        }
        self.init(address: address, prefixLength: length)
    }

    package func contains(_ other: IPAddress) -> Bool {
        guard other.bytes.count == self.address.bytes.count else { return false }
        guard let masked = IPNetwork(address: other, prefixLength: self.prefixLength) else { return false }
        return masked.address == self.address
    }

    package var description: String { "\(self.address)/\(self.prefixLength)" }

    /// What "loopback only" means: 127.0.0.0/8 and ::1.
    package static let loopback: [IPNetwork] = [IPNetwork("127.0.0.0/8")!, IPNetwork("::1/128")!]
}

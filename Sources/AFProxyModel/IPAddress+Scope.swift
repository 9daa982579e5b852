/// Which addresses are not the public internet: what `deny-private-destinations` refuses once a
/// name is resolved, so that a client cannot reach the proxy's own machine or its local network
/// through it (a name that resolves to 127.0.0.1 included).
extension IPAddress {
    /// The kind of non-public block the address is in ("loopback", "private", …), nil for a
    /// public one. IPv4-mapped IPv6 addresses are their IPv4 address already (`IPAddress`); an
    /// IPv6 address that stands for an IPv4 one through a translator or a tunnel has that IPv4
    /// address's scope (`embeddedIPv4`).
    package var nonPublicScope: String? {
        if let embedded = self.embeddedIPv4 { return embedded.nonPublicScope }
        return IPNetwork.nonPublic.first { $0.network.contains(self) }?.scope
    }

    /// The IPv4 address an IPv6 one reaches, for the blocks that carry it in plain sight:
    /// NAT64 (`64:ff9b::/96`, RFC 6052, and the local-use `64:ff9b:1::/48`, RFC 8215) and 6to4
    /// (`2002::/16`, RFC 3056, the IPv4 address in bits 16–47). Without this, a name resolving
    /// to `64:ff9b::7f00:1` reached 127.0.0.1 through the site's NAT64 gateway, or a 6to4 relay
    /// reached 192.168.1.1 for `2002:c0a8:101::`, past `deny-private-destinations`.
    ///
    /// The local-use prefix may be cut at /48, /56, /64 or /96 by its operator (RFC 6052 §2.2),
    /// which the address alone does not say; it is read like the well-known one, as a /96 with
    /// the IPv4 address in the last 32 bits, the layout DNS64 resolvers synthesise by default.
    package var embeddedIPv4: IPAddress? {
        guard self.bytes.count == 16 else { return nil }
        if IPNetwork.nat64.contains(where: { $0.contains(self) }) {
            return IPAddress(bytes: Array(self.bytes[12..<16]))
        }
        if IPNetwork.sixToFour.contains(self) {
            return IPAddress(bytes: Array(self.bytes[2..<6]))
        }
        return nil
    }
}

extension IPNetwork {
    /// RFC 1918 and RFC 4193 private blocks, RFC 6598 shared (CGNAT) space, loopback,
    /// link-local and the unspecified addresses ("this network").
    package static let nonPublic: [(network: IPNetwork, scope: String)] = [
        ("0.0.0.0/8", "unspecified"), ("10.0.0.0/8", "private"), ("100.64.0.0/10", "shared (CGNAT)"),
        ("127.0.0.0/8", "loopback"), ("169.254.0.0/16", "link-local"), ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"), ("::/128", "unspecified"), ("::1/128", "loopback"),
        ("fc00::/7", "private"), ("fe80::/10", "link-local"),
    ].map { (IPNetwork($0.0)!, $0.1) }

    /// The NAT64 prefixes: well-known (RFC 6052) and local-use (RFC 8215).
    static let nat64 = [IPNetwork("64:ff9b::/96")!, IPNetwork("64:ff9b:1::/48")!]
    /// 6to4 (RFC 3056).
    static let sixToFour = IPNetwork("2002::/16")!
}

/// Which addresses are not the public internet: what `deny-private-destinations` refuses once a
/// name is resolved, so that a client cannot reach the proxy's own machine or its local network
/// through it (a name that resolves to 127.0.0.1 included).
extension IPAddress {
    /// The kind of non-public block the address is in ("loopback", "private", …), nil for a
    /// public one. IPv4-mapped IPv6 addresses are their IPv4 address already (`IPAddress`).
    package var nonPublicScope: String? {
        IPNetwork.nonPublic.first { $0.network.contains(self) }?.scope
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
}

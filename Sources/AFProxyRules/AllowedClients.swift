import AFProxyModel

/// `allow-clients`: the addresses a client connection may come from; any other is answered 403
/// and closed before a byte of it is read. Loopback only unless configured, so a proxy is never
/// open to a network by accident.
package struct AllowedClients: Sendable, Hashable, CustomStringConvertible {
    package var networks: [IPNetwork]

    package init(_ networks: [IPNetwork]) {
        self.networks = networks
    }

    package static let loopback = AllowedClients(IPNetwork.loopback)

    /// A peer whose address is unknown (not IP) is refused.
    package func allows(_ address: IPAddress?) -> Bool {
        guard let address else { return false }
        return self.networks.contains { $0.contains(address) }
    }

    package var description: String { self.networks.map(\.description).joined(separator: ", ") }

    /// Why the daemon must not start: it would listen on `host` (not loopback) while
    /// `allow-clients` was left at its loopback default, which then refuses every client that
    /// address is for, or, if it were widened silently, makes an open proxy. Nil when fine.
    package static func exposureRefusal(listenHost host: String, allowClientsSet: Bool) -> String? {
        guard !allowClientsSet, !Self.isLoopback(host: host) else { return nil }
        return
            "listen address \(host) is not loopback: set allow-clients (--allow-clients, AFPROXY_ALLOW_CLIENTS) "
            + "to the networks allowed to use the proxy, so that it is not open to every network by accident"
    }

    private static func isLoopback(host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        guard let address = IPAddress(host) else { return false }
        return IPNetwork.loopback.contains { $0.contains(address) }
    }
}

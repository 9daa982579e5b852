import AFProxyModel

/// Where the proxy may go: `deny-hosts`, `allow-hosts` and `deny-private-destinations`. Asked
/// twice for each connection upstream: once for the host as the client wrote it, before any
/// upstream work (`denial(host:)`), and once for each address a name resolved to, just before
/// connecting (`denial(address:host:)`), so that an address rule or the private check cannot be
/// dodged with a name that resolves into the block.
///
/// `deny-hosts` wins over `allow-hosts`; with `allow-hosts` set, a destination must match one of
/// its patterns, by name or by address. `deny-private-destinations` applies whatever
/// `allow-hosts` says: it is the switch for "never my own network".
package struct DestinationPolicy: Sendable, Hashable {
    package var denyHosts: [HostPattern]
    package var allowHosts: [HostPattern]
    package var denyPrivate: Bool

    package init(denyHosts: [HostPattern] = [], allowHosts: [HostPattern] = [], denyPrivate: Bool = false) {
        self.denyHosts = denyHosts
        self.allowHosts = allowHosts
        self.denyPrivate = denyPrivate
    }

    /// No rule at all: everything is allowed and nothing needs checking.
    package static let open = DestinationPolicy()

    package var isOpen: Bool { self == .open }

    /// Whether resolved addresses must be looked at (an address rule or the private check).
    package var checksAddresses: Bool {
        self.denyPrivate || (self.denyHosts + self.allowHosts).contains { $0.isNetwork }
    }

    /// The rule that refuses `host` (a name or an address literal, as in a URL or a CONNECT
    /// target) before it is resolved; nil when only its addresses can tell, or it is allowed.
    package func denial(host: String) -> DestinationDenial? {
        if let address = IPAddress(host) { return self.denial(address: address, host: host) }
        if let rule = Self.narrowest(self.denyHosts.filter { $0.matches(host: host) }) {
            return DestinationDenial(rule: "deny-hosts \(rule)", host: host)
        }
        guard !self.allowHosts.isEmpty, !self.allowHosts.contains(where: { $0.matches(host: host) }) else {
            return nil
        }
        // An address pattern in allow-hosts may still allow the name once it is resolved; not a
        // loopback one: a name of this machine is named (localhost, a hosts-file name), and
        // looking every other name up to learn that it is not loopback would send it to DNS,
        // which an allow list of this machine's services is there to prevent.
        if self.allowHosts.contains(where: { $0.isNetwork && !$0.isLoopbackOnly }) { return nil }
        return DestinationDenial(rule: "allow-hosts (not listed)", host: host)
    }

    /// The rule that refuses connecting to `address`, which `host` resolved to (or is).
    package func denial(address: IPAddress, host: String) -> DestinationDenial? {
        let shown = "\(host) (\(address))"
        if let rule = Self.narrowest(self.denyHosts.filter { $0.matches(address) || $0.matches(host: host) }) {
            return DestinationDenial(rule: "deny-hosts \(rule)", host: shown)
        }
        if self.denyPrivate, let scope = address.nonPublicScope {
            return DestinationDenial(rule: "deny-private-destinations (\(scope) address)", host: shown)
        }
        if !self.allowHosts.isEmpty,
            !self.allowHosts.contains(where: { $0.matches(address) || $0.matches(host: host) })
        {
            return DestinationDenial(rule: "allow-hosts (not listed)", host: shown)
        }
        return nil
    }

    private static func narrowest(_ patterns: [HostPattern]) -> HostPattern? {
        patterns.max { $0.specificity < $1.specificity }
    }
}

/// Why a destination is refused: the rule, and the host (with the address when it was resolved).
package struct DestinationDenial: Sendable, Hashable, CustomStringConvertible {
    package var rule: String
    package var host: String

    package init(rule: String, host: String) {
        self.rule = rule
        self.host = host
    }

    package var description: String { "\(self.host) is denied by \(self.rule)" }
}

/// The destination kind: from the configuration only, replaced whole on reload.
extension DestinationPolicy: RuleSet {
    package static let stateFileName: String? = nil
    package var saved: NoSavedRules { NoSavedRules() }
    package mutating func restore(_ saved: NoSavedRules) {}
    package var count: Int { self.denyHosts.count + self.allowHosts.count + (self.denyPrivate ? 1 : 0) }
}

extension TaskFailure {
    /// The failure of a task whose destination `denial` refuses; its message names the rule.
    package static func destinationDenied(_ denial: DestinationDenial) -> TaskFailure {
        .destinationDenied("\(denial)")
    }
}

extension HostPattern {
    /// An address or block rather than a name: it can only match once a name is resolved.
    package var isNetwork: Bool {
        if case .network = self.form { return true }
        return false
    }

    /// An address or block inside the loopback block (`127.0.0.1`, `127.0.0.0/8`, `::1`): it can
    /// only match this machine.
    package var isLoopbackOnly: Bool {
        guard case .network(let network) = self.form, network.address.nonPublicScope == "loopback" else { return false }
        return network.address.isIPv4 ? network.prefixLength >= 8 : network.prefixLength == 128
    }
}

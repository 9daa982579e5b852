import FoundationEssentials

/// Whether the network is there, as AFNetworkReachabilityManager reports it: `reachable` when a
/// default route (IPv4 or IPv6) goes out over an interface that is up, `unreachable` otherwise,
/// `unknown` until the first answer; with that interface, its kind and when the status changed.
package struct Reachability: Sendable, Codable, Equatable {
    package enum Status: String, Sendable, Codable {
        case unknown
        case reachable
        case unreachable
    }

    package var status: Status
    /// The default route's interface (`eth0`, `wlp2s0`), nil when there is none.
    package var interface: String?
    /// `ethernet`, `wifi`, `wwan` or `other`, read from sysfs.
    package var interfaceKind: String?
    /// When `status` last changed; nil while unknown.
    package var changedAt: Date?
    /// Why the status is `unknown` although the daemon followed the network: its watcher failed
    /// (the netlink socket), so nothing it says can be trusted from then on. Nil otherwise.
    package var reason: String?

    package init(
        status: Status = .unknown, interface: String? = nil, interfaceKind: String? = nil, changedAt: Date? = nil,
        reason: String? = nil
    ) {
        self.status = status
        self.interface = interface
        self.interfaceKind = interfaceKind
        self.changedAt = changedAt
        self.reason = reason
    }

    package static let unknown = Reachability()

    // Encode nil as null: clients see every documented key.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.status, forKey: .status)
        try container.encode(self.interface, forKey: .interface)
        try container.encode(self.interfaceKind, forKey: .interfaceKind)
        try container.encode(self.changedAt, forKey: .changedAt)
        // Only when there is one: the usual answer keeps the keys it always had.
        try container.encodeIfPresent(self.reason, forKey: .reason)
    }
}

/// What the daemon does while the network is unreachable (`network-loss`).
package enum NetworkLossPolicy: String, Sendable, Equatable, CaseIterable {
    /// Download tasks to non-local destinations wait (`waiting for network`) without spending
    /// retries, and continue at their offset when it returns.
    case waitDownloads = "wait-downloads"
    /// That, and running proxied tasks to non-local destinations are suspended, and exactly those
    /// resumed when it returns (a task a person suspended stays suspended).
    case suspendAll = "suspend-all"
    /// Nothing changes.
    case ignore
}

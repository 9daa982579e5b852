import AFProxyModel

/// The access kind: who may use the proxy. `allow-clients` is asked once per new connection,
/// `proxy-auth-file`'s users once per request (open connections included, so a user taken out
/// of the file is refused from the next request on). From the configuration only.
package struct AccessRules: Sendable, Equatable {
    package var clients: AllowedClients
    /// Nil: no proxy authentication (no `proxy-auth-file`); an empty file refuses everyone.
    package var users: ProxyUsers?

    package init(clients: AllowedClients = .loopback, users: ProxyUsers? = nil) {
        self.clients = clients
        self.users = users
    }
}

extension AccessRules: RuleSet {
    package static let stateFileName: String? = nil
    package var saved: NoSavedRules { NoSavedRules() }
    package mutating func restore(_ saved: NoSavedRules) {}
    package var count: Int { self.clients.networks.count + (self.users?.hashes.count ?? 0) }
}

/// The access rules and what enforces them, behind the access kind's lock: the users requests
/// are checked against and the credentials verified already (by the SHA-256 of what the client
/// sent), which new users make forget, so that a verification never outlives the file it was
/// made against.
package struct AccessState: RuleState {
    package private(set) var ruleSet: AccessRules
    /// The users of the last `proxy-auth-file` read. A reload that turns authentication off
    /// leaves them: connections opened while it was on keep their gate, and go on as they were.
    package private(set) var checkedUsers: ProxyUsers
    /// User of each verified digest.
    package var verified: [[UInt8]: String] = [:]
    /// Digests in the order they were verified, the oldest evicted first.
    package var order: [[UInt8]] = []

    package init(_ rules: AccessRules = AccessRules()) {
        self.ruleSet = rules
        self.checkedUsers = rules.users ?? ProxyUsers()
    }

    package var isActive: Bool { self.ruleSet.users != nil }

    package mutating func update<R>(now: ContinuousClock.Instant, _ body: (inout AccessRules) -> R) -> R {
        let result = body(&self.ruleSet)
        if let users = self.ruleSet.users, users != self.checkedUsers {
            self.checkedUsers = users
            self.verified = [:]
            self.order = []
        }
        return result
    }
}

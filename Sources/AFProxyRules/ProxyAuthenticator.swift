import AFProxyModel

/// Checks requests against the access kind's users (`proxy-auth-file`), remembering which
/// presented credentials were verified already. The verdict for a request is cheap
/// (`verdict(header:)`): credentials seen and verified before are recognised by the SHA-256 of
/// what the client sent, so keep-alive connections and repeated requests do not pay for the
/// password hash again; only new credentials need the slow check (`verify`), which the listener
/// runs on a thread pool. A failed check is never remembered as a success; the cache holds
/// digests, not passwords, and lives beside the users in the rule book's `AccessState`, which
/// empties it when a reload changes them.
package struct ProxyAuthenticator: Sendable {
    package enum Verdict: Sendable, Equatable {
        case allowed(user: String)
        /// 407, saying why (no credentials, not Basic, wrong ones).
        case refused(String)
        /// Well-formed credentials not seen before: `verify` them, then ask again.
        case needsVerification(ProxyCredentials)
    }

    private let rules: LiveRules<AccessState>
    private let hashing: any PasswordHashing
    /// Verified credentials kept at most.
    package static let cacheLimit = 1024

    /// Checks against the rule book's access kind, hashing with `hashing` (the store's).
    package init(rules: LiveRules<AccessState>, hashing: any PasswordHashing) {
        self.rules = rules
        self.hashing = hashing
    }

    /// Checks against `users` alone (tests).
    package init(users: ProxyUsers, hashing: any PasswordHashing) {
        self.init(rules: LiveRules(AccessState(AccessRules(users: users))), hashing: hashing)
    }

    /// New users, and every earlier verification forgotten (what a reload does to the book).
    package func replace(_ users: ProxyUsers) {
        self.rules.change { $0.users = users }
    }

    package func verdict(header: String?) -> Verdict {
        guard let header else { return .refused("proxy authentication required") }
        guard let credentials = ProxyCredentials(header: header) else {
            return .refused("proxy authentication required: only Basic credentials are accepted")
        }
        return self.verdict(credentials: credentials)
    }

    /// The verdict on credentials a client presented otherwise (SOCKS5's RFC 1929 negotiation):
    /// allowed when verified before, else to be verified.
    package func verdict(credentials: ProxyCredentials) -> Verdict {
        let key = self.hashing.digest(credentials.cacheKey)
        if let user = self.rules.withState({ $0.verified[key] }) { return .allowed(user: user) }
        return .needsVerification(credentials)
    }

    /// The slow check; remembers a success. An unknown user costs a hash as well, so that the
    /// time taken does not tell which user names exist.
    package func verify(_ credentials: ProxyCredentials) -> Bool {
        let users = self.rules.withState { $0.checkedUsers }
        let known = users.hashes[credentials.user]
        guard let hash = known ?? users.hashes.values.min() else { return false }
        guard self.hashing.matches(password: credentials.password, hash: hash), known != nil else { return false }
        let key = self.hashing.digest(credentials.cacheKey)
        self.rules.withState { state in
            guard state.checkedUsers == users, state.verified[key] == nil else { return }
            state.verified[key] = credentials.user
            state.order.append(key)
            if state.order.count > Self.cacheLimit { state.verified[state.order.removeFirst()] = nil }
        }
        return true
    }
}

import AFProxyModel
import AFProxyRules

/// `proxy-auth-file`'s users, and which presented credentials were verified already. The
/// verdict for a request is cheap (`verdict(header:)`): credentials seen and verified before
/// are recognised by the SHA-256 of what the client sent, so keep-alive connections and
/// repeated requests do not pay for the password hash again; only new credentials need the
/// slow check (`verify`), which the listener runs on a thread pool. A failed check is never
/// remembered as a success; the cache holds digests, not passwords, and a reload empties it.
package final class ProxyAuthenticator: Sendable {
    package enum Verdict: Sendable, Equatable {
        case allowed(user: String)
        /// 407, saying why (no credentials, not Basic, wrong ones).
        case refused(String)
        /// Well-formed credentials not seen before: `verify` them, then ask again.
        case needsVerification(ProxyCredentials)
    }

    private struct State {
        var users: ProxyUsers
        var verified: [[UInt8]: String] = [:]
        /// Digests in the order they were verified, the oldest evicted first.
        var order: [[UInt8]] = []
    }

    private let state: Locked<State>
    /// Verified credentials kept at most.
    package static let cacheLimit = 1024

    package init(users: ProxyUsers) {
        self.state = Locked(State(users: users))
    }

    /// A reload: the new users, and every earlier verification forgotten.
    package func replace(_ users: ProxyUsers) {
        self.state.withLock { $0 = State(users: users) }
    }

    package func verdict(header: String?) -> Verdict {
        guard let header else { return .refused("proxy authentication required") }
        guard let credentials = ProxyCredentials(header: header) else {
            return .refused("proxy authentication required: only Basic credentials are accepted")
        }
        let key = PasswordHash.sha256(credentials.cacheKey)
        if let user = self.state.withLock({ $0.verified[key] }) { return .allowed(user: user) }
        return .needsVerification(credentials)
    }

    /// The slow check; remembers a success. An unknown user costs a hash as well, so that the
    /// time taken does not tell which user names exist.
    package func verify(_ credentials: ProxyCredentials) -> Bool {
        let users = self.state.withLock { $0.users }
        let known = users.hashes[credentials.user]
        guard let hash = known ?? users.hashes.values.min() else { return false }
        guard PasswordHash.matches(password: credentials.password, hash: hash), known != nil else { return false }
        let key = PasswordHash.sha256(credentials.cacheKey)
        self.state.withLock { state in
            guard state.users == users, state.verified[key] == nil else { return }
            state.verified[key] = credentials.user
            state.order.append(key)
            if state.order.count > Self.cacheLimit { state.verified[state.order.removeFirst()] = nil }
        }
        return true
    }
}

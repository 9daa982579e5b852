import AFProxyModel
import FoundationEssentials

/// Which CONNECTs afproxy intercepts (terminates their TLS with a certificate of its local CA
/// and makes each request inside a task): hosts matching `intercept-hosts` or a rule set through
/// the API, unless they match `intercept-exclude` or are passed through for a while because
/// their client refused the certificate (`intercept-auto-passthrough`). Everything else stays a
/// plain tunnel. Asked once per CONNECT, as a plain value.
package struct InterceptRuleSet: Sendable, Equatable {
    /// `intercept-hosts`, from the configuration.
    package var configured: [HostPattern]
    /// `intercept-exclude`, from the configuration: wins over every intercept rule.
    package var excluded: [HostPattern]
    /// How long a host whose client refused the certificate is passed through; nil: never
    /// (`intercept-auto-passthrough = no`).
    package var passthroughTime: Duration?
    /// Set through the API, kept in `intercept.json`.
    package private(set) var added: [HostPattern]
    /// Hosts passed through until a time, with why, kept in `intercept.json` too: a pinned app
    /// that refused the certificate must keep working after a restart.
    package private(set) var passthrough: [InterceptPassthrough]
    /// Hosts whose client went away right after the certificate without a word, and when it
    /// first did: one such close may be a client that changed its mind, a second one within
    /// `silentRejectionWindow` counts as a refusal. Not kept across restarts (not in `saved`).
    private var silentRejections: [String: Date] = [:]

    /// How soon a second silent close after the certificate passes a host through.
    package static let silentRejectionWindow: Duration = .seconds(600)
    /// Hosts remembered at most: any client may name as many as it likes.
    static let silentRejectionCapacity = 1000

    package init(
        configured: [HostPattern] = [], excluded: [HostPattern] = [], passthroughTime: Duration? = .seconds(3600),
        added: [HostPattern] = [], passthrough: [InterceptPassthrough] = []
    ) {
        self.configured = configured
        self.excluded = excluded
        self.passthroughTime = passthroughTime
        self.added = added
        self.passthrough = passthrough
    }

    /// Takes the configuration's part of `configured` (at start and on reload); what was set at
    /// runtime stays.
    package mutating func configure(from configured: InterceptRuleSet) {
        self.configured = configured.configured
        self.excluded = configured.excluded
        self.passthroughTime = configured.passthroughTime
    }

    /// Whether a CONNECT to `host` is intercepted at `now`.
    package func intercepts(host: String, now: Date) -> Bool {
        guard
            self.configured.contains(where: { $0.matches(host: host) })
                || self.added.contains(where: { $0.matches(host: host) })
        else { return false }
        if self.excluded.contains(where: { $0.matches(host: host) }) { return false }
        let name = host.lowercased()
        return !self.passthrough.contains { $0.host == name && $0.until > now }
    }

    /// Adds a runtime rule; false when the same pattern is in force already.
    package mutating func add(_ pattern: HostPattern) -> Bool {
        guard !self.added.contains(pattern), !self.configured.contains(pattern) else { return false }
        self.added.append(pattern)
        return true
    }

    /// Removes the runtime rule `pattern`, or the pass-through of the host it names; false when
    /// there is neither (a configured pattern goes by editing the configuration).
    package mutating func remove(_ pattern: HostPattern) -> Bool {
        let before = (self.added.count, self.passthrough.count)
        self.added.removeAll { $0 == pattern }
        let host = pattern.description.lowercased()
        self.passthrough.removeAll { $0.host == host }
        return before != (self.added.count, self.passthrough.count)
    }

    /// The client of a CONNECT to `host` refused the certificate: with auto-passthrough on, the
    /// host is a plain tunnel until `now + passthroughTime`. Answers the entry made, if any.
    package mutating func clientRefused(host: String, reason: String, now: Date) -> InterceptPassthrough? {
        guard let time = self.passthroughTime else { return nil }
        let name = host.lowercased()
        let until = now.addingTimeInterval(Double(time.components.seconds))
        let entry = InterceptPassthrough(host: name, reason: reason, until: until)
        self.passthrough.removeAll { $0.host == name || $0.until <= now }
        self.passthrough.append(entry)
        return entry
    }

    /// The client of a CONNECT to `host` went away right after the certificate without an alert
    /// or a request: the host is passed through (as by `clientRefused`) when that already
    /// happened within `silentRejectionWindow`. Answers the entry made, if any.
    package mutating func clientLikelyRejected(host: String, reason: String, now: Date) -> InterceptPassthrough? {
        guard self.passthroughTime != nil else { return nil }
        let name = host.lowercased()
        let window = Double(Self.silentRejectionWindow.components.seconds)
        self.silentRejections = self.silentRejections.filter { now.timeIntervalSince($0.value) < window }
        if self.silentRejections.removeValue(forKey: name) != nil {
            let seconds = Self.silentRejectionWindow.components.seconds
            return self.clientRefused(host: name, reason: "\(reason), twice within \(seconds) s", now: now)
        }
        if self.silentRejections.count >= Self.silentRejectionCapacity,
            let oldest = self.silentRejections.min(by: { $0.value < $1.value })?.key
        {
            self.silentRejections[oldest] = nil
        }
        self.silentRejections[name] = now
        return nil
    }

    /// The pass-throughs still in force at `now`.
    package func passthrough(at now: Date) -> [InterceptPassthrough] {
        self.passthrough.filter { $0.until > now }
    }
}

/// A host passed through as a plain tunnel until `until`, and why.
package struct InterceptPassthrough: Sendable, Codable, Equatable {
    package var host: String
    package var reason: String
    package var until: Date

    package init(host: String, reason: String, until: Date) {
        self.host = host
        self.reason = reason
        self.until = until
    }
}

extension InterceptRuleSet: RuleSet {
    /// The runtime rules and the pass-throughs, as `intercept.json` holds them.
    package struct Saved: Codable, Sendable, Equatable {
        package var hosts: [String]
        package var passthrough: [InterceptPassthrough]

        package init(hosts: [String], passthrough: [InterceptPassthrough]) {
            self.hosts = hosts
            self.passthrough = passthrough
        }
    }

    package static let stateFileName: String? = "intercept.json"

    package var saved: Saved {
        Saved(hosts: self.added.map(\.description), passthrough: self.passthrough)
    }

    /// Patterns that no longer parse are dropped (the file was edited by hand).
    package mutating func restore(_ saved: Saved) {
        self.added = saved.hosts.compactMap { try? HostPattern($0) }
        self.passthrough = saved.passthrough
    }

    package var count: Int { self.configured.count + self.added.count }
}

import AFProxyModel

/// What a hold rule looks at in a new task; every condition given must match (AND). A rule
/// with none holds every new task, and must say so with `all`: an empty `hold add` is more
/// likely a mistake than a wish to stop all traffic.
package struct HoldConditions: Sendable, Equatable {
    package var host: HostPattern?
    /// Compared as sent, case-sensitively (methods are case-sensitive tokens, RFC 9110 §9.1).
    package var method: String?
    package var url: HoldURLPattern?
    package var kind: TaskKind?
    package var all: Bool

    package init(
        host: HostPattern? = nil, method: String? = nil, url: HoldURLPattern? = nil, kind: TaskKind? = nil,
        all: Bool = false
    ) {
        self.host = host
        self.method = method
        self.url = url
        self.kind = kind
        self.all = all
    }

    /// The conditions as a person or the API writes them, each checked: the message says which
    /// one is wrong and why.
    package init(
        host: String?, method: String?, url: String?, kind: String?, all: Bool
    ) throws(HoldRuleError) {
        self.init(all: all)
        if let host {
            do throws(HostPatternError) {
                self.host = try HostPattern(host)
            } catch {
                throw HoldRuleError("host: \(error.message)")
            }
        }
        if let method {
            guard Self.isToken(method) else {
                throw HoldRuleError(
                    "method: expected an HTTP method token (GET, POST, CONNECT, …), got \(method.prefix(40))")
            }
            self.method = method
        }
        if let url { self.url = try HoldURLPattern(url) }
        if let kind {
            guard let known = TaskKind(rawValue: kind) else {
                throw HoldRuleError("kind: expected data, upload, stream or download, got \(kind.prefix(40))")
            }
            self.kind = known
        }
        let given = self.host != nil || self.method != nil || self.url != nil || self.kind != nil
        if all && given {
            throw HoldRuleError("all holds every new task: it takes no other condition")
        }
        if !all && !given {
            throw HoldRuleError(
                "a hold rule needs a condition (host, method, url, kind), or all to hold every new task")
        }
    }

    package func matches(_ facts: HoldFacts) -> Bool {
        if let kind = self.kind, kind != facts.kind { return false }
        if let method = self.method, method != facts.method { return false }
        if let host = self.host, !host.matches(host: facts.host) { return false }
        if let url = self.url, !url.matches(facts.url) { return false }
        return true
    }

    /// The conditions as `hold list` shows them: `host=*.example.org method=POST`, or `all`.
    package var summary: String {
        var parts: [String] = []
        if let host = self.host { parts.append("host=\(host)") }
        if let method = self.method { parts.append("method=\(method)") }
        if let url = self.url { parts.append("url=\(url.text)") }
        if let kind = self.kind { parts.append("kind=\(kind.rawValue)") }
        return parts.isEmpty ? "all" : parts.joined(separator: " ")
    }

    private static func isToken(_ text: String) -> Bool {
        let symbols = Set("!#$%&'*+-.^_`|~".utf8)
        return !text.isEmpty && text.utf8.count <= 32
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || symbols.contains(byte)
            }
    }
}

/// What a hold rule is matched against, from a task about to start: its host as the client
/// named it (no port, no brackets), its method (`CONNECT` for a tunnel), its URL (`host:port` for
/// a tunnel) and its kind.
package struct HoldFacts: Sendable, Equatable {
    package var host: String
    package var method: String
    package var url: String
    package var kind: TaskKind

    package init(host: String, method: String, url: String, kind: TaskKind) {
        self.host = host
        self.method = method
        self.url = url
        self.kind = kind
    }
}

import AFProxyRules
import FoundationEssentials

/// `GET /v1/intercept`: which hosts are intercepted, which never are, and which are passed
/// through for a while, with why.
package struct InterceptList: Sendable, Codable, Equatable {
    /// One intercept pattern and where it comes from: `config` (intercept-hosts) or `runtime`.
    package struct Host: Sendable, Codable, Equatable {
        package var pattern: String
        package var origin: String

        package init(pattern: String, origin: String) {
            self.pattern = pattern
            self.origin = origin
        }
    }

    package var hosts: [Host]
    package var exclude: [String]
    package var passthrough: [InterceptPassthrough]
    /// How long a refused host is passed through; nil: auto-passthrough is off.
    package var passthroughSeconds: Int?

    package init(hosts: [Host], exclude: [String], passthrough: [InterceptPassthrough], passthroughSeconds: Int?) {
        self.hosts = hosts
        self.exclude = exclude
        self.passthrough = passthrough
        self.passthroughSeconds = passthroughSeconds
    }

    package init(_ rules: InterceptRuleSet, now: Date) {
        self.init(
            hosts: rules.configured.map { Host(pattern: $0.description, origin: "config") }
                + rules.added.map { Host(pattern: $0.description, origin: "runtime") },
            exclude: rules.excluded.map(\.description), passthrough: rules.passthrough(at: now),
            passthroughSeconds: rules.passthroughTime.map { Int($0.components.seconds) })
    }

    // Encode nil as null: clients see every documented key.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.hosts, forKey: .hosts)
        try container.encode(self.exclude, forKey: .exclude)
        try container.encode(self.passthrough, forKey: .passthrough)
        try container.encode(self.passthroughSeconds, forKey: .passthroughSeconds)
    }
}

/// `POST /v1/intercept`: a host pattern to intercept from now on (kept across restarts).
package struct InterceptRequestBody: Sendable, Codable, Equatable {
    package var host: String

    package init(host: String) {
        self.host = host
    }
}

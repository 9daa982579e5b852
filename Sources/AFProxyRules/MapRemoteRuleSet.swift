import AFProxyModel

/// The map-remote rules in force, as a plain value: a request whose host (and path) one of them
/// names goes to another origin instead (`afproxyctl map api.example.com/v1/ http://127.0.0.1:8080/v1/`):
/// the rule's URL with what followed the prefix appended, the `Host` field following it. With no
/// rule a task pays one atomic load. Set at runtime (`/v1/rules/map-remote`), kept in
/// `map-remote.json`.
package struct MapRemoteRuleSet: Sendable, Equatable, Codable {
    package private(set) var rules: [MapRemoteRule]
    package private(set) var nextID: Int

    package init(rules: [MapRemoteRule] = [], nextID: Int = 1) {
        self.rules = rules
        self.nextID = max(nextID, (rules.map(\.id).max() ?? 0) + 1)
    }

    /// The URL the first rule that names the request sends it to, and that rule; nil when none does.
    package func target(host: String, url: String) -> (rule: Int, url: String)? {
        guard let (rule, path) = HostPathPattern.first(of: self.rules, host: host, url: url, pattern: \.pattern)
        else { return nil }
        return (rule.id, rule.mapped(path: path))
    }

    package mutating func remove(id: Int) -> MapRemoteRule? {
        guard let index = self.rules.firstIndex(where: { $0.id == id }) else { return nil }
        return self.rules.remove(at: index)
    }
}

/// One map-remote rule: the requests it names (host pattern, path prefix) and the origin and base
/// path they go to instead (`http://127.0.0.1:8080/v1/`).
package struct MapRemoteRule: Sendable, Equatable, Codable, Identifiable {
    package var id: Int
    package var pattern: HostPathPattern
    /// `scheme://authority[/base]`, checked when the rule was added.
    package var to: String

    package init(id: Int, pattern: HostPathPattern, to: String) {
        self.id = id
        self.pattern = pattern
        self.to = to
    }

    /// The URL a request for `path` (path and query) goes to: the base with what followed the
    /// prefix, one `/` between them.
    package func mapped(path: String) -> String {
        let rest = self.pattern.remainder(of: path)
        switch (self.to.hasSuffix("/"), rest.hasPrefix("/")) {
        case (true, true): return self.to + rest.dropFirst()
        case (false, false) where !rest.isEmpty && !rest.hasPrefix("?"):
            return self.to + "/" + rest
        default: return self.to + rest
        }
    }

    /// `scheme://authority[/path]` for http(s) with a host and no query, fragment or credentials;
    /// nil otherwise.
    package static func checkedTarget(_ text: String) -> String? {
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"),
            !text.contains(where: { $0 == "?" || $0 == "#" || $0 == " " || $0.asciiValue.map { $0 < 0x20 } == true }),
            let host = LoopbackHost.host(ofURL: text), !host.isEmpty
        else { return nil }
        let afterScheme = text[text.index(text.firstIndex(of: ":")!, offsetBy: 3)...]
        let authority = afterScheme.prefix { $0 != "/" }
        guard !authority.contains("@") else { return nil }
        return text
    }

    private enum CodingKeys: String, CodingKey {
        case id, host, path, to
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.id = try container.decode(Int.self, forKey: .id)
        do {
            self.pattern = try HostPathPattern.parse(
                host: try container.decode(String.self, forKey: .host),
                path: try container.decodeIfPresent(String.self, forKey: .path))
        } catch let error as RuleRequestError {
            throw DecodingError.dataCorruptedError(
                forKey: .host, in: container, debugDescription: "map-remote rule \(self.id): \(error.message)")
        }
        let to = try container.decode(String.self, forKey: .to)
        guard let checked = Self.checkedTarget(to) else {
            throw DecodingError.dataCorruptedError(
                forKey: .to, in: container, debugDescription: "map-remote rule \(self.id): \(to) is not an http(s) URL")
        }
        self.to = checked
    }

    // Encode nil as null: clients see every documented key.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.pattern.host.description, forKey: .host)
        try container.encode(self.pattern.path, forKey: .path)
        try container.encode(self.to, forKey: .to)
    }
}

/// What `POST /v1/rules/map-remote` takes: `{"host": "api.example.com", "path": "/v1/", "to":
/// "http://127.0.0.1:8080/v1/"}`; `path` optional.
package struct MapRemoteRequestBody: Sendable, Codable, Equatable {
    package var host: String
    package var path: String?
    package var to: String

    package init(host: String, path: String? = nil, to: String) {
        self.host = host
        self.path = path
        self.to = to
    }
}

extension MapRemoteRuleSet: RuleSet {
    package static let stateFileName: String? = "map-remote.json"
    package typealias Saved = MapRemoteRuleSet
}

extension MapRemoteRuleSet: EditableRuleSet {
    package static let kind = "map-remote"
    package static let ruleName = "map-remote rule"
    package static let requestFields = ["host", "path", "to"]

    package mutating func add(_ request: MapRemoteRequestBody) throws(RuleRequestError) -> MapRemoteRule {
        let pattern = try HostPathPattern.parse(host: request.host, path: request.path)
        guard let to = MapRemoteRule.checkedTarget(request.to) else {
            throw RuleRequestError(
                "to must be an http:// or https:// URL with a host and no query (http://127.0.0.1:8080/v1/), got \(request.to.prefix(200))"
            )
        }
        let rule = MapRemoteRule(id: self.nextID, pattern: pattern, to: to)
        self.nextID += 1
        self.rules.append(rule)
        return rule
    }
}

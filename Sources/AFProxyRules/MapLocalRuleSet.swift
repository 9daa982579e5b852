import AFProxyModel

/// The map-local rules in force, as a plain value: a request whose host (and path) one of them
/// names is answered by afproxy from a file, or from a file under a directory, without contacting
/// the origin (`afproxyctl map api.example.com/static/ /srv/fixtures/`). With no rule a task pays
/// one atomic load. Set at runtime (`/v1/rules/map-local`), kept in `map-local.json`.
package struct MapLocalRuleSet: Sendable, Equatable, Codable {
    package private(set) var rules: [MapLocalRule]
    package private(set) var nextID: Int

    package init(rules: [MapLocalRule] = [], nextID: Int = 1) {
        self.rules = rules
        self.nextID = max(nextID, (rules.map(\.id).max() ?? 0) + 1)
    }

    /// What the first rule that names the request answers it with; nil when none does.
    package func answer(host: String, url: String) -> MapLocalPlan? {
        guard let (rule, path) = HostPathPattern.first(of: self.rules, host: host, url: url, pattern: \.pattern)
        else { return nil }
        return MapLocalPlan(rule: rule.id, file: rule.file(for: path), readAs: rule.readAs)
    }

    package mutating func remove(id: Int) -> MapLocalRule? {
        guard let index = self.rules.firstIndex(where: { $0.id == id }) else { return nil }
        return self.rules.remove(at: index)
    }
}

/// The file a map-local rule answers a request with, or nil when the request's path leaves the
/// rule's directory (`..`); the rule's id in either case, and whose rights the file is read with.
package struct MapLocalPlan: Sendable, Equatable {
    package var rule: Int
    package var file: String?
    package var readAs: ReadRights

    package init(rule: Int, file: String?, readAs: ReadRights) {
        self.rule = rule
        self.file = file
        self.readAs = readAs
    }
}

/// One map-local rule: the requests it names and the file, or the directory (its path ends with
/// `/`), that answers them, read with the rights of whoever added the rule.
package struct MapLocalRule: Sendable, Equatable, Codable, Identifiable {
    package var id: Int
    package var pattern: HostPathPattern
    /// Absolute; a directory when it ends with `/`.
    package var file: String
    /// The rule's author's: a file that author could not read is not served.
    package var readAs: ReadRights

    package init(id: Int, pattern: HostPathPattern, file: String, readAs: ReadRights) {
        self.id = id
        self.pattern = pattern
        self.file = file
        self.readAs = readAs
    }

    /// The file for a request's `path` (path and query): the rule's file, or under its directory
    /// what followed the prefix, its query dropped, percent-decoded, `index.html` for a directory;
    /// nil when a segment is `..` (or holds a NUL), which would leave the directory.
    package func file(for path: String) -> String? {
        guard self.file.hasSuffix("/") else { return self.file }
        let rest = self.pattern.remainder(of: path).prefix { $0 != "?" }
        var segments: [String] = []
        for segment in rest.split(separator: "/", omittingEmptySubsequences: true) {
            let decoded = PercentDecoding.decode(segment)
            guard decoded != "..", !decoded.contains("/"), !decoded.contains("\0") else { return nil }
            if decoded != "." { segments.append(decoded) }
        }
        if rest.isEmpty || rest.hasSuffix("/") { segments.append("index.html") }
        return self.file + segments.joined(separator: "/")
    }

    private enum CodingKeys: String, CodingKey {
        case id, host, path, file, readAs
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
                forKey: .host, in: container, debugDescription: "map-local rule \(self.id): \(error.message)")
        }
        self.file = try container.decode(String.self, forKey: .file)
        guard self.file.hasPrefix("/"), !self.file.contains("\0") else {
            throw DecodingError.dataCorruptedError(
                forKey: .file, in: container, debugDescription: "map-local rule \(self.id): not an absolute path")
        }
        // A rule kept without it (made before rules had authors) reads as no one in particular.
        self.readAs = try container.decodeIfPresent(ReadRights.self, forKey: .readAs) ?? .anyone
    }

    // Encode nil as null: clients see every documented key.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.pattern.host.description, forKey: .host)
        try container.encode(self.pattern.path, forKey: .path)
        try container.encode(self.file, forKey: .file)
        try container.encode(self.readAs, forKey: .readAs)
    }
}

/// What `POST /v1/rules/map-local` takes: `{"host": "api.example.com", "path": "/static/", "file":
/// "/srv/fixtures/"}`; `path` optional; `file` absolute, a directory when it ends with `/`.
package struct MapLocalRequestBody: Sendable, Codable, Equatable {
    package var host: String
    package var path: String?
    package var file: String

    package init(host: String, path: String? = nil, file: String) {
        self.host = host
        self.path = path
        self.file = file
    }
}

extension MapLocalRuleSet: RuleSet {
    package static let stateFileName: String? = "map-local.json"
    package typealias Saved = MapLocalRuleSet
}

extension MapLocalRuleSet: EditableRuleSet {
    package static let kind = "map-local"
    package static let ruleName = "map-local rule"
    package static let requestFields = ["host", "path", "file"]

    /// The file is read when a request comes (it may be made later); only its form is checked here.
    package mutating func add(_ request: MapLocalRequestBody) throws(RuleRequestError) -> MapLocalRule {
        try self.add(request, readingAs: .anyone)
    }

    /// The caller's rights go with the rule: its files are served only when the caller could read them.
    package mutating func add(
        _ request: MapLocalRequestBody, readingAs rights: ReadRights
    ) throws(RuleRequestError) -> MapLocalRule {
        let pattern = try HostPathPattern.parse(host: request.host, path: request.path)
        guard request.file.hasPrefix("/"), !request.file.contains("\0"), request.file.utf8.count <= 4096 else {
            throw RuleRequestError(
                "file must be an absolute path (a directory when it ends with /), got \(request.file.prefix(200))")
        }
        let rule = MapLocalRule(id: self.nextID, pattern: pattern, file: request.file, readAs: rights)
        self.nextID += 1
        self.rules.append(rule)
        return rule
    }
}

import AFProxyModel

/// The record rules in force, as a plain value: a task whose host (and path) one of them names has
/// its bodies kept in the state directory, up to the rule's limit each (`BodyStore`). With no rule
/// — the usual case — a task pays one atomic load (`LiveRules.isActive`). Set at runtime
/// (`/v1/rules/records`, `afproxyctl record`) and kept in `records.json`, `nextID` with them.
package struct RecordRuleSet: Sendable, Equatable, Codable {
    package private(set) var rules: [RecordRule]
    package private(set) var nextID: Int

    package init(rules: [RecordRule] = [], nextID: Int = 1) {
        self.rules = rules
        self.nextID = max(nextID, (rules.map(\.id).max() ?? 0) + 1)
    }

    /// What the first rule that names the request says to keep; nil when none does. `url` is
    /// absolute: its path starts at the first `/` after the authority.
    package func plan(host: String, url: String) -> RecordPlan? {
        let found = HostPathPattern.first(of: self.rules, host: host, url: url) {
            HostPathPattern(host: $0.host, path: $0.path)
        }
        guard let rule = found?.rule else { return nil }
        return RecordPlan(rule: rule.id, limit: rule.max, request: rule.request, response: rule.response)
    }

    package func plan(host: String, path: String) -> RecordPlan? {
        guard let rule = self.rules.first(where: { $0.matches(host: host, path: path) }) else { return nil }
        return RecordPlan(rule: rule.id, limit: rule.max, request: rule.request, response: rule.response)
    }

    package mutating func remove(id: Int) -> RecordRule? {
        guard let index = self.rules.firstIndex(where: { $0.id == id }) else { return nil }
        return self.rules.remove(at: index)
    }
}

/// What a task keeps of its bodies: which rule said so, how much of each, which sides.
package struct RecordPlan: Sendable, Equatable {
    package var rule: Int
    package var limit: Int64
    package var request: Bool
    package var response: Bool

    package init(rule: Int, limit: Int64, request: Bool, response: Bool) {
        self.rule = rule
        self.limit = limit
        self.request = request
        self.response = response
    }
}

/// One record rule: a host pattern, an optional path prefix (`/v1/`; a trailing `*` is the same
/// prefix), the bytes kept of each body, and the sides recorded.
package struct RecordRule: Sendable, Equatable, Codable, Identifiable {
    package var id: Int
    package var host: HostPattern
    package var path: String?
    package var max: Int64
    package var request: Bool
    package var response: Bool

    /// A body is served whole by `GET /v1/tasks/{id}/body`: the limit keeps that bounded.
    package static let largestMax: Int64 = 64 << 20
    package static let defaultMax: Int64 = 1 << 20

    package init(id: Int, host: HostPattern, path: String?, max: Int64, request: Bool, response: Bool) {
        self.id = id
        self.host = host
        self.path = path
        self.max = max
        self.request = request
        self.response = response
    }

    package func matches(host: String, path: String) -> Bool {
        HostPathPattern(host: self.host, path: self.path).matches(host: host, path: path)
    }

    private enum CodingKeys: String, CodingKey {
        case id, host, path, max, request, response
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.id = try container.decode(Int.self, forKey: .id)
        let host = try container.decode(String.self, forKey: .host)
        do {
            self.host = try HostPattern(host)
        } catch {
            throw DecodingError.dataCorruptedError(
                forKey: .host, in: container, debugDescription: "record rule \(self.id): \(error.message)")
        }
        self.path = try container.decodeIfPresent(String.self, forKey: .path)
        self.max = try container.decode(Int64.self, forKey: .max)
        self.request = try container.decode(Bool.self, forKey: .request)
        self.response = try container.decode(Bool.self, forKey: .response)
    }

    // Encode nil as null: clients see every documented key.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.host.description, forKey: .host)
        try container.encode(self.path, forKey: .path)
        try container.encode(self.max, forKey: .max)
        try container.encode(self.request, forKey: .request)
        try container.encode(self.response, forKey: .response)
    }
}

/// What `POST /v1/rules/records` takes: `{"host": "api.example.com", "path": "/v1/", "max":
/// 1048576, "request": true, "response": true}`; only `host` is required.
package struct RecordRequestBody: Sendable, Codable, Equatable {
    package var host: String
    package var path: String?
    package var max: Int64?
    package var request: Bool?
    package var response: Bool?

    package init(host: String, path: String? = nil, max: Int64? = nil, request: Bool? = nil, response: Bool? = nil) {
        self.host = host
        self.path = path
        self.max = max
        self.request = request
        self.response = response
    }
}

extension RecordRuleSet: RuleSet {
    package static let stateFileName: String? = "records.json"
    package typealias Saved = RecordRuleSet
}

extension RecordRuleSet: EditableRuleSet {
    package static let kind = "records"
    package static let ruleName = "record rule"
    package static let requestFields = ["host", "path", "max", "request", "response"]

    package mutating func add(_ request: RecordRequestBody) throws(RuleRequestError) -> RecordRule {
        let pattern = try HostPathPattern.parse(host: request.host, path: request.path)
        let max = request.max ?? RecordRule.defaultMax
        guard max > 0, max <= RecordRule.largestMax else {
            throw RuleRequestError("max must be from 1 byte to \(RecordRule.largestMax) (64 MiB), got \(max)")
        }
        let (requestSide, responseSide) = (request.request ?? true, request.response ?? true)
        guard requestSide || responseSide else {
            throw RuleRequestError("a record rule keeps the request body, the response body or both")
        }
        let rule = RecordRule(
            id: self.nextID, host: pattern.host, path: pattern.path, max: max,
            request: requestSide, response: responseSide)
        self.nextID += 1
        self.rules.append(rule)
        return rule
    }
}

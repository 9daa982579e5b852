/// `GET /v1/rules`: the rule kinds a person edits at runtime, in the rule book's order. Enough
/// for afproxyctl to list them and say what each takes without knowing any of their types.
package struct RuleKindList: Sendable, Codable, Equatable {
    package var kinds: [RuleKindSummary]

    package init(kinds: [RuleKindSummary]) {
        self.kinds = kinds
    }
}

/// One kind of `RuleKindList`.
package struct RuleKindSummary: Sendable, Codable, Equatable {
    /// Its name in `/v1/rules/{kind}` and `afproxyctl rules KIND`: `holds`.
    package var kind: String
    /// One of its rules, as messages name it: `hold rule`.
    package var rule: String
    /// The keys `POST /v1/rules/{kind}` takes.
    package var fields: [String]
    /// How many rules are in force.
    package var count: Int

    package init(kind: String, rule: String, fields: [String], count: Int) {
        self.kind = kind
        self.rule = rule
        self.fields = fields
        self.count = count
    }
}

/// `GET /v1/rules/{kind}`: the kind's rules in order, each the kind's own JSON object with its
/// `id`, and the keys `POST` takes, which afproxyctl puts first among the columns. Generic
/// because the two ends read the rules differently: the daemon encodes each kind's own type,
/// afproxyctl decodes plain JSON values.
package struct RuleList<Rule: Sendable>: Sendable {
    package var kind: String
    package var fields: [String]
    package var rules: [Rule]

    package init(kind: String, fields: [String], rules: [Rule]) {
        self.kind = kind
        self.fields = fields
        self.rules = rules
    }
}

extension RuleList: Encodable where Rule: Encodable {}
extension RuleList: Decodable where Rule: Decodable {}

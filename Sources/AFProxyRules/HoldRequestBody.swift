/// What `POST /v1/holds` and `POST /v1/rules/holds` take: a rule to add, its conditions as texts
/// (checked by `HoldConditions`). It lives beside the rule set because the set's `add` takes it
/// (`EditableRuleSet.Request`); afproxyctl's `hold add` builds it through the wire API.
package struct HoldRequestBody: Sendable, Codable, Equatable {
    package var host: String?
    package var method: String?
    package var url: String?
    package var kind: String?
    package var all: Bool?
    package var once: Bool?
    /// Hold at the response rather than before the request goes.
    package var response: Bool?

    package init(
        host: String? = nil, method: String? = nil, url: String? = nil, kind: String? = nil, all: Bool? = nil,
        once: Bool? = nil, response: Bool? = nil
    ) {
        self.response = response
        self.host = host
        self.method = method
        self.url = url
        self.kind = kind
        self.all = all
        self.once = once
    }

    package func conditions() throws(HoldRuleError) -> HoldConditions {
        try HoldConditions(host: self.host, method: self.method, url: self.url, kind: self.kind, all: self.all ?? false)
    }
}

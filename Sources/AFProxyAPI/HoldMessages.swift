import AFProxyRules

/// `POST /v1/holds`: a rule to add, its conditions as texts (checked by `HoldConditions`).
package struct HoldRequestBody: Sendable, Codable, Equatable {
    package var host: String?
    package var method: String?
    package var url: String?
    package var kind: String?
    package var all: Bool?
    package var once: Bool?

    package init(
        host: String? = nil, method: String? = nil, url: String? = nil, kind: String? = nil, all: Bool? = nil,
        once: Bool? = nil
    ) {
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

/// `GET /v1/holds`: the rules in force, in order.
package struct HoldList: Sendable, Codable, Equatable {
    package var holds: [HoldRule]

    package init(holds: [HoldRule]) {
        self.holds = holds
    }
}

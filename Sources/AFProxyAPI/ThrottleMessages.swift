import AFProxyRules

/// `GET /v1/throttle`: the rules in force.
package struct ThrottleRuleList: Sendable, Codable, Equatable {
    package var rules: [ThrottleRule]
    package init(rules: [ThrottleRule]) { self.rules = rules }
}

/// The body of `PUT /v1/throttle/…`: the rate of each direction to set, as a rate text
/// (`"1.5MiB"`) or a number of bytes per second; a direction left out keeps its rate.
package struct ThrottleSetBody: Sendable, Codable, Equatable {
    package var down: String?
    package var up: String?

    package init(down: String? = nil, up: String? = nil) {
        self.down = down
        self.up = up
    }

    private enum CodingKeys: String, CodingKey { case down, up }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) throws -> String? {
            if let number = try? container.decodeIfPresent(Int64.self, forKey: key) { return String(number) }
            return try container.decodeIfPresent(String.self, forKey: key)
        }
        self.down = try text(.down)
        self.up = try text(.up)
    }
}

/// One hold rule, a breakpoint without editing: a new task that matches its conditions is
/// created suspended, before any byte goes upstream, until a person resumes or cancels it.
///
/// Its JSON is the same in the control API (`GET /v1/holds`) and in `holds.json`: the
/// conditions as their texts, null when not given.
package struct HoldRule: Sendable, Equatable {
    /// Never reused, not even across restarts (`HoldRuleSet.nextID` is kept with the rules).
    package var id: Int
    package var conditions: HoldConditions
    /// Removed once it caught a task.
    package var once: Bool
    /// The tasks it caught so far.
    package var caught: Int
    /// Holds at the response: after the origin's head arrived, before anything reaches the
    /// client (an HTTP request only); false: before the request goes upstream.
    package var response: Bool

    package init(id: Int, conditions: HoldConditions, once: Bool = false, caught: Int = 0, response: Bool = false) {
        self.id = id
        self.conditions = conditions
        self.once = once
        self.caught = caught
        self.response = response
    }
}

extension HoldRule: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, host, method, url, kind, all, once, caught, response
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.id = try container.decode(Int.self, forKey: .id)
        self.once = try container.decodeIfPresent(Bool.self, forKey: .once) ?? false
        self.caught = try container.decodeIfPresent(Int.self, forKey: .caught) ?? 0
        self.response = try container.decodeIfPresent(Bool.self, forKey: .response) ?? false
        do {
            self.conditions = try HoldConditions(
                host: container.decodeIfPresent(String.self, forKey: .host),
                method: container.decodeIfPresent(String.self, forKey: .method),
                url: container.decodeIfPresent(String.self, forKey: .url),
                kind: container.decodeIfPresent(String.self, forKey: .kind),
                all: container.decodeIfPresent(Bool.self, forKey: .all) ?? false)
        } catch let error as HoldRuleError {
            throw DecodingError.dataCorruptedError(
                forKey: .id, in: container, debugDescription: "hold rule \(self.id): \(error.message)")
        }
    }

    // Encode nil as null: clients see every documented key.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.conditions.host?.description, forKey: .host)
        try container.encode(self.conditions.method, forKey: .method)
        try container.encode(self.conditions.url?.text, forKey: .url)
        try container.encode(self.conditions.kind?.rawValue, forKey: .kind)
        try container.encode(self.conditions.all, forKey: .all)
        try container.encode(self.once, forKey: .once)
        try container.encode(self.caught, forKey: .caught)
        try container.encode(self.response, forKey: .response)
    }
}

/// What limits one task, as its record shows it (`limit` in the JSON, LIMIT in `list`).
package struct TaskLimit: Sendable, Codable, Equatable {
    package struct Entry: Sendable, Codable, Equatable {
        package var bytesPerSecond: Int64
        /// The rule: `task 42`, `host *.example.org`, `global`.
        package var rule: String

        package init(bytesPerSecond: Int64, rule: String) {
            self.bytesPerSecond = bytesPerSecond
            self.rule = rule
        }
    }

    package var down: Entry?
    package var up: Entry?

    package init(down: Entry? = nil, up: Entry? = nil) {
        self.down = down
        self.up = up
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.down, forKey: .down)
        try container.encode(self.up, forKey: .up)
    }
}

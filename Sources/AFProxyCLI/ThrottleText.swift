import AFProxyAPI

/// How throttle rules and limits read in the terminal: `1M/s`, `down 1M/s (global)`.
enum ThrottleText {
    static func rate(_ bytesPerSecond: Int64?) -> String {
        guard let bytesPerSecond, bytesPerSecond > 0 else { return "-" }
        return "\(ByteRate(bytesPerSecond: min(bytesPerSecond, ByteRate.maximum)))/s"
    }

    /// The `throttle --list` table: RULE DOWN UP.
    static func table(_ rules: [ThrottleRule]) -> String {
        guard !rules.isEmpty else { return "no throttle rules" }
        var rows = [["RULE", "DOWN", "UP"]]
        for rule in rules {
            rows.append([
                rule.scope.description, self.rate(rule.down?.bytesPerSecond), self.rate(rule.up?.bytesPerSecond),
            ])
        }
        let width = rows.map { $0[0].count }.max()!
        let downWidth = rows.map { $0[1].count }.max()!
        return rows.map { $0[0].padding(width + 1) + " " + $0[1].padding(downWidth + 1) + " " + $0[2] }
            .joined(separator: "\n")
    }

    /// One rule after a change: `global: down 1M/s, up 1M/s`.
    static func rule(_ rule: ThrottleRule) -> String {
        "\(rule.scope): down \(self.rate(rule.down?.bytesPerSecond)), up \(self.rate(rule.up?.bytesPerSecond))"
    }

    /// The LIMIT column: `1M/s` when both directions have the same limit, else each that has one.
    static func column(_ limit: TaskLimit?) -> String {
        guard let limit else { return "-" }
        if let down = limit.down, let up = limit.up, down.bytesPerSecond == up.bytesPerSecond {
            return self.rate(down.bytesPerSecond)
        }
        var parts: [String] = []
        if let down = limit.down { parts.append("down " + self.rate(down.bytesPerSecond)) }
        if let up = limit.up { parts.append("up " + self.rate(up.bytesPerSecond)) }
        return parts.joined(separator: " ")
    }

    /// The `show` line: which rule limits each direction.
    static func detail(_ limit: TaskLimit?) -> String {
        guard let limit else { return "-" }
        var parts: [String] = []
        if let down = limit.down { parts.append("down \(self.rate(down.bytesPerSecond)) (\(down.rule))") }
        if let up = limit.up { parts.append("up \(self.rate(up.bytesPerSecond)) (\(up.rule))") }
        return parts.joined(separator: ", ")
    }
}

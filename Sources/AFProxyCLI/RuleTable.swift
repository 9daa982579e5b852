import AFProxyAPI

/// The tables of `afproxyctl rules`, made from the API's JSON alone: the kinds, and one kind's
/// rules with a column a field, so that a kind the daemon gained later shows as well as holds.
enum RuleTable {
    /// `rules`: KIND RULES FIELDS.
    static func kinds(_ list: RuleKindList) -> String {
        guard !list.kinds.isEmpty else { return "no rule kinds" }
        let rows = list.kinds.map { [$0.kind, String($0.count), $0.fields.joined(separator: " ")] }
        return Self.aligned([["KIND", "RULES", "FIELDS"]] + rows)
    }

    /// `rules KIND`: ID, then the fields `POST` takes in the kind's order, then the rest of the
    /// rules' keys (what the daemon keeps of each rule, `caught`) in name order.
    static func rules(_ list: RuleList<[String: JSONValue]>) -> String {
        guard !list.rules.isEmpty else { return "no rules of kind \(list.kind)" }
        let keys = Set(list.rules.flatMap(\.keys))
        let fields = list.fields.filter { $0 != "id" }
        let rest = keys.subtracting(fields).subtracting(["id"]).sorted()
        let columns = ["id"] + fields + rest
        let rows = list.rules.map { rule in columns.map { rule[$0]?.cell ?? "-" } }
        return Self.aligned([columns.map { $0.uppercased() }] + rows)
    }

    /// Columns two spaces apart, the last one not padded (every rule table of afproxyctl).
    static func aligned(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

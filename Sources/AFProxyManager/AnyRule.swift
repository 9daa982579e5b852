/// One rule of any editable kind, encoded as the kind encodes it: what lets `EditableRules`
/// answer rules without its callers knowing their type, and the API list them in one array.
package struct AnyRule: Encodable, Sendable {
    package let id: Int
    private let rule: any Encodable & Sendable

    package init<Rule: Encodable & Sendable & Identifiable>(_ rule: Rule) where Rule.ID == Int {
        self.id = rule.id
        self.rule = rule
    }

    package func encode(to encoder: any Encoder) throws {
        try self.rule.encode(to: encoder)
    }
}

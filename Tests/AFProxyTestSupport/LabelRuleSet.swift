import AFProxyRules

/// An editable rule kind that exists only in the tests: a rule is a label and nothing else. It
/// shows that conforming to `EditableRuleSet` is all a kind does for the edge: handed to a
/// `LiveRules`, it is served by `/v1/rules/labels` with no code of its own there.
package struct LabelRuleSet: EditableRuleSet, Equatable, Codable {
    package struct Rule: Codable, Sendable, Equatable, Identifiable {
        package var id: Int
        package var label: String
    }

    package struct Request: Decodable, Sendable {
        package var label: String
    }

    package static let kind = "labels"
    package static let ruleName = "label rule"
    package static let requestFields = ["label"]
    package static let stateFileName: String? = "labels.json"

    package private(set) var rules: [Rule] = []
    private var nextID = 1

    package init() {}

    package mutating func add(_ request: Request) throws(RuleRequestError) -> Rule {
        guard !request.label.isEmpty else { throw RuleRequestError("label: expected some text") }
        let rule = Rule(id: self.nextID, label: request.label)
        self.nextID += 1
        self.rules.append(rule)
        return rule
    }

    package mutating func remove(id: Int) -> Rule? {
        guard let index = self.rules.firstIndex(where: { $0.id == id }) else { return nil }
        return self.rules.remove(at: index)
    }

    package var saved: LabelRuleSet { self }
    package mutating func restore(_ saved: LabelRuleSet) { self = saved }
    package var count: Int { self.rules.count }
}

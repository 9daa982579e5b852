import AFProxyModel

/// The hold rules in force, in the order they were added, as a plain value: the session manager
/// keeps one behind a lock and asks it about each new task; `holds.json` keeps it across
/// restarts, `nextID` with it so that a rule id names one rule for good.
package struct HoldRuleSet: Sendable, Equatable, Codable {
    package private(set) var rules: [HoldRule]
    package private(set) var nextID: Int

    package init(rules: [HoldRule] = [], nextID: Int = 1) {
        self.rules = rules
        self.nextID = max(nextID, (rules.map(\.id).max() ?? 0) + 1)
    }

    package var isEmpty: Bool { self.rules.isEmpty }

    package mutating func add(_ conditions: HoldConditions, once: Bool = false, response: Bool = false) -> HoldRule {
        let rule = HoldRule(id: self.nextID, conditions: conditions, once: once, response: response)
        self.nextID += 1
        self.rules.append(rule)
        return rule
    }

    /// The rule removed, nil when there is none with `id`.
    package mutating func remove(id: Int) -> HoldRule? {
        guard let index = self.rules.firstIndex(where: { $0.id == id }) else { return nil }
        return self.rules.remove(at: index)
    }

    /// The id of the first rule that matches `facts`, which counts the catch (a `once` rule
    /// leaves the set with it); nil when none does.
    /// `response`: the rules that hold at the response are asked (once the origin's head came),
    /// else those that hold before the request goes.
    package mutating func catchTask(_ facts: HoldFacts, response: Bool = false) -> Int? {
        guard
            let index = self.rules.firstIndex(where: { $0.response == response && $0.conditions.matches(facts) })
        else { return nil }
        let id = self.rules[index].id
        if self.rules[index].once {
            self.rules.remove(at: index)
        } else {
            self.rules[index].caught += 1
        }
        return id
    }

    private enum CodingKeys: String, CodingKey {
        case rules, nextID
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            rules: try container.decode([HoldRule].self, forKey: .rules),
            nextID: try container.decodeIfPresent(Int.self, forKey: .nextID) ?? 1)
    }
}

/// The hold kind: every rule is set at runtime, and the whole set is kept in `holds.json`, its
/// `nextID` with it, so that an id is never given twice.
extension HoldRuleSet: RuleSet {
    package static let stateFileName: String? = "holds.json"
    package typealias Saved = HoldRuleSet
}

/// The throttle kind: host and global rules set at runtime are kept in `throttle.json`, with
/// the configuration's defaults lifted at runtime; task rules end with their task.
extension ThrottleRuleSet: RuleSet {
    package static let stateFileName: String? = "throttle.json"

    package var saved: SavedThrottleRules {
        let (rules, lifted) = self.persistent
        return SavedThrottleRules(rules: rules, lifted: lifted)
    }

    package mutating func restore(_ saved: SavedThrottleRules) {
        self = ThrottleRuleSet(defaults: Array(self.defaults.values), runtime: saved.rules, lifted: Set(saved.lifted))
    }

    package var count: Int { self.rules.count }
}

/// Its buckets follow every change of the rules.
extension ThrottleState: RuleState {
    package var ruleSet: ThrottleRuleSet { self.rules }
}

/// What `throttle.json` holds. Task rules are not kept: the tasks they name end with the daemon.
package struct SavedThrottleRules: Sendable, Codable, Equatable {
    package var rules: [ThrottleRule]
    /// Defaults of the configuration file lifted at runtime (`unthrottle --global`).
    package var lifted: [ThrottleScope]

    package init(rules: [ThrottleRule] = [], lifted: [ThrottleScope] = []) {
        self.rules = rules
        self.lifted = lifted
    }
}

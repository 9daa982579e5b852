import AFProxyModel

/// The throttle rules in force, as one value: at most one per scope. A task is limited, in
/// each direction, by its own rule, the most specific host rule that names its host, and the
/// global rule, together: it moves a byte only when each of their buckets allows.
///
/// Two layers: `defaults` from the configuration file, and what was set at runtime
/// (`runtime`, kept in the state directory). A runtime rule replaces the default of its scope;
/// removing a scope at runtime also lifts its default (remembered in `lifted`) until a rule is
/// set for that scope again, so `unthrottle --global` means no global limit whatever the file says.
package struct ThrottleRuleSet: Sendable, Equatable {
    package private(set) var defaults: [ThrottleScope: ThrottleRule] = [:]
    package private(set) var runtime: [ThrottleScope: ThrottleRule] = [:]
    package private(set) var lifted: Set<ThrottleScope> = []

    package init(defaults: [ThrottleRule] = [], runtime: [ThrottleRule] = [], lifted: Set<ThrottleScope> = []) {
        for rule in defaults { self.defaults[rule.scope] = rule }
        for rule in runtime { self.runtime[rule.scope] = rule }
        self.lifted = lifted
    }

    /// The rules in force, global first, then hosts by name, then tasks by id.
    package var rules: [ThrottleRule] {
        var merged = self.defaults.filter { !self.lifted.contains($0.key) }
        for (scope, rule) in self.runtime { merged[scope] = rule }
        return merged.values.sorted { Self.order($0.scope) < Self.order($1.scope) }
    }

    package func rule(for scope: ThrottleScope) -> ThrottleRule? {
        if let rule = self.runtime[scope] { return rule }
        return self.lifted.contains(scope) ? nil : self.defaults[scope]
    }

    package var isEmpty: Bool { self.rules.isEmpty }

    /// Sets the rate of `scope` in `directions`, keeping the other direction of a rule in force.
    package mutating func set(_ scope: ThrottleScope, rate: ByteRate, directions: Set<ThrottleDirection>) {
        var rule = self.rule(for: scope) ?? ThrottleRule(scope: scope)
        if directions.contains(.down) { rule.down = rate }
        if directions.contains(.up) { rule.up = rate }
        self.runtime[scope] = rule
        self.lifted.remove(scope)
    }

    /// Removes the rule of `scope` in `directions` (both: the whole rule); answers whether a
    /// rule was in force there.
    @discardableResult
    package mutating func remove(_ scope: ThrottleScope, directions: Set<ThrottleDirection> = [.down, .up]) -> Bool {
        guard var rule = self.rule(for: scope) else { return false }
        if directions.contains(.down) { rule.down = nil }
        if directions.contains(.up) { rule.up = nil }
        if rule.down == nil && rule.up == nil {
            self.runtime.removeValue(forKey: scope)
            if self.defaults[scope] != nil { self.lifted.insert(scope) }
        } else {
            self.runtime[scope] = rule
        }
        return true
    }

    /// The configuration file's rules, on start and reload; runtime rules stay.
    package mutating func replaceDefaults(_ rules: [ThrottleRule]) {
        self.defaults = [:]
        for rule in rules { self.defaults[rule.scope] = rule }
        self.lifted = self.lifted.filter { self.defaults[$0] != nil }
    }

    /// Forgets a task's rule once the task ended.
    package mutating func removeTask(_ id: Int) {
        self.runtime.removeValue(forKey: .task(id))
    }

    /// The runtime layer to keep in the state directory: host and global rules (task rules end
    /// with their task) and the lifted defaults.
    package var persistent: (rules: [ThrottleRule], lifted: [ThrottleScope]) {
        let rules = self.runtime.values.filter {
            if case .task = $0.scope { return false }
            return true
        }
        return (
            rules.sorted { Self.order($0.scope) < Self.order($1.scope) },
            self.lifted.sorted { Self.order($0) < Self.order($1) }
        )
    }

    /// The scopes that apply to a task with `id` whose host is `host`, in each direction,
    /// those without a rate in a direction left out of it.
    package func scopes(task id: Int, host: String) -> [ThrottleScope] {
        var scopes: [ThrottleScope] = []
        if self.rule(for: .task(id)) != nil { scopes.append(.task(id)) }
        if let host = self.hostRule(for: host) { scopes.append(host.scope) }
        if self.rule(for: .global) != nil { scopes.append(.global) }
        return scopes
    }

    /// The most specific host rule whose pattern names `host`; among equals, the first by name.
    package func hostRule(for host: String) -> ThrottleRule? {
        var best: (rule: ThrottleRule, specificity: Int)?
        for rule in self.rules {
            guard case .host(let pattern) = rule.scope, pattern.matches(host: host) else { continue }
            if best == nil || pattern.specificity > best!.specificity { best = (rule, pattern.specificity) }
        }
        return best?.rule
    }

    /// What limits a task in each direction: the lowest rate among its rules, and which rule
    /// that is; nil when no rule applies.
    package func limit(task id: Int, host: String) -> TaskLimit? {
        let rules = self.scopes(task: id, host: host).compactMap { self.rule(for: $0) }
        func tightest(_ direction: ThrottleDirection) -> TaskLimit.Entry? {
            var best: TaskLimit.Entry?
            for rule in rules {
                guard let rate = rule.rate(direction) else { continue }
                if best == nil || rate.bytesPerSecond < best!.bytesPerSecond {
                    best = TaskLimit.Entry(bytesPerSecond: rate.bytesPerSecond, rule: rule.scope.description)
                }
            }
            return best
        }
        let limit = TaskLimit(down: tightest(.down), up: tightest(.up))
        return limit.down == nil && limit.up == nil ? nil : limit
    }

    private static func order(_ scope: ThrottleScope) -> String {
        switch scope {
        case .global: "0"
        case .host(let pattern): "1" + pattern.description
        case .task(let id): "2" + String(repeating: "0", count: max(0, 12 - String(id).count)) + String(id)
        }
    }
}

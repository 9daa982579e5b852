import AFProxyModel
import AFProxyRules
import Testing

@Suite struct ThrottleRuleSetTests {
    func rate(_ text: String) -> ByteRate { try! ByteRate(parsing: text) }
    func host(_ text: String) -> ThrottleScope { .host(try! HostPattern(text)) }

    @Test func directionsAreSetAndRemovedSeparately() {
        var rules = ThrottleRuleSet()
        rules.set(.global, rate: self.rate("1M"), directions: [.down, .up])
        rules.set(.global, rate: self.rate("2M"), directions: [.up])
        #expect(rules.rule(for: .global) == ThrottleRule(scope: .global, down: self.rate("1M"), up: self.rate("2M")))
        let removedDown = rules.remove(.global, directions: [.down])
        #expect(removedDown)
        #expect(rules.rule(for: .global) == ThrottleRule(scope: .global, up: self.rate("2M")))
        let removedUp = rules.remove(.global, directions: [.up])
        #expect(removedUp)
        #expect(rules.isEmpty)
        let removedAgain = rules.remove(.global)
        #expect(!removedAgain)
    }

    @Test func theMostSpecificHostRuleAppliesWithTheTaskAndGlobalRules() {
        var rules = ThrottleRuleSet()
        rules.set(self.host("*.example.org"), rate: self.rate("3M"), directions: [.down, .up])
        rules.set(self.host("*.cdn.example.org"), rate: self.rate("2M"), directions: [.down])
        rules.set(.global, rate: self.rate("10M"), directions: [.down, .up])
        rules.set(.task(7), rate: self.rate("5M"), directions: [.up])
        #expect(
            rules.scopes(task: 7, host: "a.cdn.example.org") == [.task(7), self.host("*.cdn.example.org"), .global])
        #expect(rules.scopes(task: 8, host: "www.example.org") == [self.host("*.example.org"), .global])
        #expect(rules.scopes(task: 8, host: "example.net") == [.global])
        let limit = rules.limit(task: 7, host: "a.cdn.example.org")
        #expect(limit?.down == TaskLimit.Entry(bytesPerSecond: 2_000_000, rule: "host *.cdn.example.org"))
        #expect(limit?.up == TaskLimit.Entry(bytesPerSecond: 5_000_000, rule: "task 7"))
        #expect(ThrottleRuleSet().limit(task: 1, host: "x") == nil)
    }

    @Test func runtimeRulesGoOverDefaultsAndRemovingOneLiftsItsDefault() {
        let defaults = [
            ThrottleRule(scope: .global, down: self.rate("10M"), up: self.rate("10M")),
            ThrottleRule(scope: self.host("example.org"), down: self.rate("1M")),
        ]
        var rules = ThrottleRuleSet(defaults: defaults)
        rules.set(self.host("example.org"), rate: self.rate("500K"), directions: [.up])
        #expect(
            rules.rule(for: self.host("example.org"))
                == ThrottleRule(scope: self.host("example.org"), down: self.rate("1M"), up: self.rate("500K")))
        let lifted = rules.remove(.global)
        #expect(lifted)
        #expect(rules.rule(for: .global) == nil)
        #expect(rules.persistent.lifted == [.global])
        // A reload keeps the lift while the file still has the default, forgets it once it does not.
        rules.replaceDefaults(defaults)
        #expect(rules.rule(for: .global) == nil)
        rules.replaceDefaults([])
        #expect(rules.persistent.lifted.isEmpty)
        #expect(rules.rules.map(\.scope) == [self.host("example.org")])
    }

    @Test func taskRulesAreNotKept() {
        var rules = ThrottleRuleSet()
        rules.set(.task(3), rate: self.rate("1M"), directions: [.down])
        rules.set(.global, rate: self.rate("1M"), directions: [.down])
        #expect(rules.persistent.rules.map(\.scope) == [.global])
        rules.removeTask(3)
        #expect(rules.rule(for: .task(3)) == nil)
    }
}

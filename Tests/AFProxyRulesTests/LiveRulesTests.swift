import AFProxyModel
import AFProxyRules
import Testing

/// A store in memory: what a previous run left, and every value saved since, in order.
private final class MemoryStore<Value: Sendable>: RuleStore {
    private let kept: Value?
    private let values = Locked<[Value]>([])

    init(kept: Value? = nil) { self.kept = kept }

    var saved: [Value] { self.values.withLock { $0 } }
    func load() -> Value? { self.kept }
    func save(_ value: Value) { self.values.withLock { $0.append(value) } }
}

@Suite struct LiveRulesTests {
    func rate(_ text: String) -> ByteRate { try! ByteRate(parsing: text) }
    func conditions(_ host: String) -> HoldConditions { HoldConditions(host: try! HostPattern(host)) }
    func facts(_ host: String) -> HoldFacts {
        HoldFacts(host: host, method: "GET", url: "http://\(host)/", kind: .data)
    }

    @Test func aChangeIsSavedOnlyWhenItAltersWhatIsKept() {
        let store = MemoryStore<SavedThrottleRules>()
        let throttler = Throttler(defaults: [], store: store)
        _ = throttler.set(.global, down: self.rate("1M"), up: nil)
        // A task rule ends with its task: nothing to keep, nothing written.
        _ = throttler.set(.task(7), down: self.rate("2M"), up: nil)
        throttler.forget(task: 7)
        _ = throttler.remove(.global, directions: [.down, .up])
        #expect(
            store.saved == [
                SavedThrottleRules(rules: [ThrottleRule(scope: .global, down: self.rate("1M"))]), SavedThrottleRules(),
            ])
    }

    @Test func keptRulesComeBackOverTheConfiguredOnes() {
        let configured = ThrottleRule(scope: .global, down: self.rate("1M"))
        let kept = ThrottleRule(scope: .global, down: self.rate("5M"))
        let store = MemoryStore(kept: SavedThrottleRules(rules: [kept]))
        let throttler = Throttler(defaults: [configured], store: store)
        #expect(throttler.rules.rules == [kept])
        #expect(throttler.isActive)
        #expect(store.saved.isEmpty)  // what was read is not written back
        throttler.replaceDefaults([])
        #expect(throttler.rules.rules == [kept])
    }

    @Test func theFlagFollowsWhetherAnyRuleIsInForce() {
        let holds = LiveRules(HoldRuleSet(), store: MemoryStore<HoldRuleSet>())
        #expect(!holds.isActive)
        let rule = holds.change { $0.add(self.conditions("example.org"), once: true) }
        #expect(holds.isActive)
        let caught = holds.change { $0.catchTask(self.facts("example.org")) }
        #expect(caught == rule.id)
        #expect(!holds.isActive)  // a once rule is used up

        let throttler = Throttler()
        _ = throttler.set(.task(3), down: self.rate("1M"), up: nil)
        #expect(throttler.isActive)
        throttler.forget(task: 3)
        #expect(!throttler.isActive)
    }

    @Test func holdsAreKeptWholeAndRestoredWithTheirNextID() {
        let store = MemoryStore<HoldRuleSet>()
        let holds = LiveRules(HoldRuleSet(), store: store)
        let first = holds.change { $0.add(self.conditions("a.example"), once: false) }
        _ = holds.change { $0.catchTask(self.facts("b.example")) }  // no catch, no change, no write
        _ = holds.change { $0.remove(id: first.id) }
        #expect(store.saved.count == 2)

        let again = LiveRules(HoldRuleSet(), store: MemoryStore(kept: store.saved.last))
        #expect(again.restore() == 0)
        let next = again.change { $0.add(self.conditions("c.example"), once: false) }
        #expect(next.id == first.id + 1)  // an id names one rule for good
    }

    @Test func aConfigurationOnlyKindHasNoFileAndIsReplacedWhole() throws {
        #expect(DestinationPolicy.stateFileName == nil)
        #expect(ThrottleRuleSet.stateFileName == "throttle.json")
        #expect(HoldRuleSet.stateFileName == "holds.json")
        let destinations = LiveRules(DestinationPolicy.open)
        #expect(!destinations.isActive)
        #expect(destinations.restore() == 0)
        let policy = DestinationPolicy(denyHosts: [try HostPattern("*.example.org")], denyPrivate: true)
        destinations.change { $0 = policy }
        #expect(destinations.isActive)
        #expect(destinations.ruleSet.count == 2)
        #expect(destinations.ruleSet.denial(host: "www.example.org") != nil)
    }
}

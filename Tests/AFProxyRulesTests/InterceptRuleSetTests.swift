import AFProxyRules
import FoundationEssentials
import Testing

@Suite struct InterceptRuleSetTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func patterns(_ texts: String...) -> [HostPattern] {
        texts.map { try! HostPattern($0) }
    }

    @Test func nothingIsInterceptedByDefault() {
        let rules = InterceptRuleSet()
        #expect(!rules.isActive)
        #expect(!rules.intercepts(host: "example.org", now: Self.now))
    }

    @Test func configuredPatternsAndTheExclusionsThatWin() {
        let rules = InterceptRuleSet(
            configured: Self.patterns("*.example.org", "api.test"), excluded: Self.patterns("bank.example.org"))
        #expect(rules.intercepts(host: "www.example.org", now: Self.now))
        #expect(rules.intercepts(host: "API.TEST.", now: Self.now))
        #expect(!rules.intercepts(host: "example.org", now: Self.now))  // *.domain is below it only
        #expect(!rules.intercepts(host: "bank.example.org", now: Self.now))
        #expect(!rules.intercepts(host: "other.test", now: Self.now))
    }

    @Test func starInterceptsEveryHostAndAddress() throws {
        let rules = InterceptRuleSet(configured: Self.patterns("*"), excluded: Self.patterns("10.0.0.0/8"))
        #expect(rules.intercepts(host: "anything.test", now: Self.now))
        #expect(rules.intercepts(host: "::1", now: Self.now))
        #expect(!rules.intercepts(host: "10.1.2.3", now: Self.now))
        #expect(try HostPattern("*").description == "*")
    }

    @Test func runtimeRulesAreAddedOnceRemovedAndSaved() {
        var rules = InterceptRuleSet(configured: Self.patterns("a.test"))
        #expect(rules.add(try! HostPattern("b.test")))
        #expect(!rules.add(try! HostPattern("B.test")))
        #expect(!rules.add(try! HostPattern("a.test")))  // configured already
        #expect(rules.intercepts(host: "b.test", now: Self.now))
        #expect(rules.saved.hosts == ["b.test"])
        #expect(!rules.remove(try! HostPattern("a.test")))  // configured: changes in the file
        #expect(rules.remove(try! HostPattern("b.test")))
        #expect(!rules.intercepts(host: "b.test", now: Self.now))
    }

    @Test func aRefusedCertificatePassesTheHostThroughForAWhile() {
        var rules = InterceptRuleSet(configured: Self.patterns("*"), passthroughTime: .seconds(3600))
        let entry = rules.clientRefused(host: "Pinned.test", reason: "alert unknown_ca", now: Self.now)
        #expect(entry?.host == "pinned.test")
        #expect(entry?.until == Self.now.addingTimeInterval(3600))
        #expect(!rules.intercepts(host: "pinned.test", now: Self.now.addingTimeInterval(3599)))
        #expect(rules.intercepts(host: "pinned.test", now: Self.now.addingTimeInterval(3600)))
        #expect(rules.intercepts(host: "other.test", now: Self.now))
        #expect(rules.passthrough(at: Self.now).count == 1)
        #expect(rules.passthrough(at: Self.now.addingTimeInterval(3600)).isEmpty)
        // --remove ends it early.
        #expect(rules.remove(try! HostPattern("pinned.test")))
        #expect(rules.intercepts(host: "pinned.test", now: Self.now))
    }

    @Test func withoutAutoPassthroughARefusalChangesNothing() {
        var rules = InterceptRuleSet(configured: Self.patterns("*"), passthroughTime: nil)
        #expect(rules.clientRefused(host: "pinned.test", reason: "x", now: Self.now) == nil)
        #expect(rules.intercepts(host: "pinned.test", now: Self.now))
    }

    @Test func restoreKeepsTheConfigurationAndDropsPatternsThatNoLongerParse() {
        var rules = InterceptRuleSet(configured: Self.patterns("a.test"))
        let passthrough = InterceptPassthrough(host: "p.test", reason: "r", until: Self.now.addingTimeInterval(60))
        rules.restore(InterceptRuleSet.Saved(hosts: ["b.test", "not a pattern"], passthrough: [passthrough]))
        #expect(rules.saved.hosts == ["b.test"])
        #expect(rules.count == 2)
        #expect(!rules.intercepts(host: "p.test", now: Self.now))
        var reloaded = InterceptRuleSet(configured: Self.patterns("c.test"), passthroughTime: nil)
        reloaded.restore(rules.saved)
        rules.configure(from: reloaded)
        #expect(!rules.intercepts(host: "a.test", now: Self.now))
        #expect(rules.intercepts(host: "c.test", now: Self.now))
        #expect(rules.intercepts(host: "b.test", now: Self.now))
        #expect(rules.passthroughTime == nil)
    }

    @Test func aSilentCloseAfterTheCertificatePassesTheHostThroughOnlyOnARepeatSoonAfter() {
        var rules = InterceptRuleSet(configured: Self.patterns("*.test"))
        #expect(rules.clientLikelyRejected(host: "pinned.test", reason: "closed", now: Self.now) == nil)
        #expect(rules.intercepts(host: "pinned.test", now: Self.now))
        // Another host's close does not count for this one.
        #expect(rules.clientLikelyRejected(host: "other.test", reason: "closed", now: Self.now) == nil)
        let entry = rules.clientLikelyRejected(
            host: "Pinned.test", reason: "closed", now: Self.now.addingTimeInterval(60))
        #expect(entry?.host == "pinned.test")
        #expect(entry?.reason == "closed, twice within 600 s")
        #expect(!rules.intercepts(host: "pinned.test", now: Self.now.addingTimeInterval(61)))
        // Past the window the first close is forgotten; the strikes are not saved.
        let late = Self.now.addingTimeInterval(60 + 601)
        #expect(rules.clientLikelyRejected(host: "other.test", reason: "closed", now: late) == nil)
        #expect(rules.saved.passthrough.map(\.host) == ["pinned.test"])
        rules.passthroughTime = nil
        #expect(rules.clientLikelyRejected(host: "off.test", reason: "x", now: Self.now) == nil)
        #expect(rules.clientLikelyRejected(host: "off.test", reason: "x", now: Self.now) == nil)
    }
}

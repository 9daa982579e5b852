import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyRules

/// The record kind as a value: which requests a rule names, what it keeps, and what it refuses.
@Suite struct RecordRuleSetTests {
    @Test func theFirstRuleThatNamesTheRequestDecides() throws {
        var rules = RecordRuleSet()
        let api = try rules.add(RecordRequestBody(host: "api.example.com", path: "/v1/*", max: 4096, request: false))
        let all = try rules.add(RecordRequestBody(host: "*.example.com"))
        #expect(
            rules.plan(host: "api.example.com", url: "https://api.example.com/v1/users?x=1")
                == RecordPlan(rule: api.id, limit: 4096, request: false, response: true))
        // Not under /v1/: the next rule decides.
        #expect(rules.plan(host: "API.example.com.", path: "/v1")?.rule == all.id)
        #expect(
            rules.plan(host: "www.example.com", url: "http://www.example.com:8080")
                == RecordPlan(rule: all.id, limit: RecordRule.defaultMax, request: true, response: true))
        #expect(rules.plan(host: "example.com", url: "http://example.com/") == nil)
        #expect(rules.plan(host: "other.org", path: "/v1/") == nil)
        #expect(rules.remove(id: api.id) == api && rules.remove(id: api.id) == nil)
        #expect(rules.count == 1)
    }

    @Test func badRulesAreRefusedWithTheReason() {
        var rules = RecordRuleSet()
        func refusal(_ body: RecordRequestBody) -> String? {
            do {
                _ = try rules.add(body)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(refusal(RecordRequestBody(host: "a..b"))?.contains("expected a host name") == true)
        #expect(refusal(RecordRequestBody(host: "a.b", path: "v1"))?.contains("path must start with /") == true)
        #expect(refusal(RecordRequestBody(host: "a.b", max: 0))?.contains("max must be") == true)
        #expect(
            refusal(RecordRequestBody(host: "a.b", max: RecordRule.largestMax + 1))?.contains("max must be") == true)
        #expect(refusal(RecordRequestBody(host: "a.b", request: false, response: false))?.contains("or both") == true)
        #expect(rules.count == 0)
    }

    @Test func theSetSurvivesItsFileWithItsNextID() throws {
        var rules = RecordRuleSet()
        _ = try rules.add(RecordRequestBody(host: "10.0.0.0/8", path: "/x"))
        let second = try rules.add(RecordRequestBody(host: "b.example"))
        _ = rules.remove(id: second.id)
        let restored = try JSONDecoder().decode(RecordRuleSet.self, from: JSONEncoder().encode(rules.saved))
        #expect(restored == rules)
        var next = restored
        #expect(try next.add(RecordRequestBody(host: "c.example")).id == second.id + 1)
        #expect(restored.plan(host: "10.1.2.3", path: "/x/y")?.rule == 1)
    }
}

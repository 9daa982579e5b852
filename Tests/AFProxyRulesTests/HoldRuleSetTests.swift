import AFProxyModel
import AFProxyRules
import FoundationEssentials
import Testing

@Suite struct HoldRuleSetTests {
    private func facts(
        host: String = "api.example.org", method: String = "GET", url: String = "http://api.example.org/v1/items",
        kind: TaskKind = .data
    ) -> HoldFacts {
        HoldFacts(host: host, method: method, url: url, kind: kind)
    }

    private func conditions(
        host: String? = nil, method: String? = nil, url: String? = nil, kind: String? = nil, all: Bool = false
    ) throws -> HoldConditions {
        try HoldConditions(host: host, method: method, url: url, kind: kind, all: all)
    }

    @Test func everyConditionGivenMustMatch() throws {
        let rule = try self.conditions(host: "*.example.org", method: "POST", url: "/v1/", kind: "upload")
        #expect(rule.matches(self.facts(method: "POST", kind: .upload)))
        #expect(!rule.matches(self.facts(method: "GET", kind: .upload)))
        #expect(!rule.matches(self.facts(method: "POST", kind: .data)))
        #expect(!rule.matches(self.facts(host: "example.org", method: "POST", kind: .upload)))
        #expect(!rule.matches(self.facts(method: "POST", url: "http://api.example.org/v2/", kind: .upload)))
    }

    @Test func eachConditionAlone() throws {
        #expect(try self.conditions(host: "API.example.org.").matches(self.facts()))
        #expect(try self.conditions(host: "10.0.0.0/8").matches(self.facts(host: "10.1.2.3")))
        #expect(!(try self.conditions(host: "10.0.0.0/8").matches(self.facts())))
        // Methods are case-sensitive tokens.
        #expect(!(try self.conditions(method: "get").matches(self.facts())))
        #expect(try self.conditions(url: #"items$"#).matches(self.facts()))
        #expect(try self.conditions(url: #"^https?://api\."#).matches(self.facts()))
        #expect(try self.conditions(kind: "stream").matches(self.facts(method: "CONNECT", kind: .stream)))
        #expect(try self.conditions(all: true).matches(self.facts(kind: .download)))
    }

    private func refusal(
        host: String? = nil, method: String? = nil, url: String? = nil, kind: String? = nil, all: Bool = false
    ) -> String {
        do throws(HoldRuleError) {
            _ = try HoldConditions(host: host, method: method, url: url, kind: kind, all: all)
            return ""
        } catch {
            return error.message
        }
    }

    @Test func badConditionsSayWhatIsWrong() {
        #expect(self.refusal().contains("needs a condition"))
        #expect(self.refusal(host: "x.org", all: true).contains("no other condition"))
        #expect(self.refusal(host: "bad host").hasPrefix("host:"))
        #expect(self.refusal(method: "G T").hasPrefix("method:"))
        #expect(self.refusal(url: "[").contains("not a valid regular expression"))
        #expect(self.refusal(kind: "tunnel").contains("data, upload, stream or download"))
        #expect(self.refusal(url: String(repeating: "a", count: HoldURLPattern.maxLength + 1)).contains("longer than"))
        #expect(self.refusal(url: "(a+)+").contains("exponential"))
    }

    @Test func nestedRepetitionIsRefused() {
        for bad in ["(a+)+", "(a*)*b", "x(?:ab+){2,}", "((a|b)+)*", "(a{2,3})+"] {
            #expect(HoldURLPattern.nestedRepetition(in: bad) != nil, "\(bad)")
        }
        for good in ["(ab)+", "a+b*", #"\(a+\)+"#, "[(a+)]+", "(a+)?", "/v1/(items|users)/[0-9]+$", "(a)(b+)"] {
            #expect(HoldURLPattern.nestedRepetition(in: good) == nil, "\(good)")
        }
    }

    @Test func theFirstMatchingRuleCatchesAndCounts() throws {
        var set = HoldRuleSet()
        let first = set.add(try self.conditions(method: "POST"))
        let second = set.add(try self.conditions(host: "api.example.org"))
        #expect(first.id == 1 && second.id == 2)
        #expect(set.catchTask(self.facts()) == 2)
        #expect(set.catchTask(self.facts(method: "POST")) == 1)
        #expect(set.catchTask(self.facts(host: "other.org", method: "PUT")) == nil)
        #expect(set.rules.map(\.caught) == [1, 1])
    }

    @Test func aOnceRuleLeavesWhenItCatches() throws {
        var set = HoldRuleSet()
        let once = set.add(try self.conditions(url: "items"), once: true)
        let always = set.add(try self.conditions(all: true))
        #expect(set.catchTask(self.facts()) == once.id)
        #expect(set.rules.map(\.id) == [always.id])
        #expect(set.catchTask(self.facts()) == always.id)
    }

    @Test func idsAreNeverReused() throws {
        var set = HoldRuleSet()
        let a = set.add(try self.conditions(method: "GET"))
        let b = set.add(try self.conditions(method: "PUT"))
        #expect(set.remove(id: b.id) == b)
        #expect(set.remove(id: b.id) == nil)
        #expect(set.add(try self.conditions(method: "PATCH")).id == 3)
        #expect(set.remove(id: a.id)?.id == a.id)
        // A set read back (holds.json) continues after its nextID, or after its highest id.
        let data = try JSONEncoder().encode(set)
        var back = try JSONDecoder().decode(HoldRuleSet.self, from: data)
        #expect(back == set)
        #expect(back.add(try self.conditions(method: "GET")).id == 4)
        #expect(
            HoldRuleSet(rules: [HoldRule(id: 9, conditions: try self.conditions(all: true))], nextID: 2).nextID == 10)
    }

    @Test func theJSONNamesEveryConditionAndRefusesABadOne() throws {
        let rule = HoldRule(
            id: 3, conditions: try self.conditions(host: "*.Example.org", url: "/a"), once: true, caught: 2)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(rule), as: UTF8.self)
        #expect(
            text
                == #"{"all":false,"caught":2,"host":"*.example.org","id":3,"kind":null,"method":null,"once":true,"response":false,"url":"/a"}"#
        )
        #expect(try JSONDecoder().decode(HoldRule.self, from: Data(text.utf8)) == rule)
        let bad = #"{"id":1,"kind":"tunnel"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(HoldRule.self, from: Data(bad.utf8)) }
        #expect(rule.conditions.summary == "host=*.example.org url=/a")
        #expect(try self.conditions(all: true).summary == "all")
    }
}

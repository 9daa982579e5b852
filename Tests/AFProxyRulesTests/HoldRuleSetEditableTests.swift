import AFProxyModel
import AFProxyRules
import FoundationEssentials
import Testing

/// The hold kind as the generic edge sees it (`EditableRuleSet`): what `POST /v1/rules/holds`
/// adds and refuses, as values.
@Suite struct HoldRuleSetEditableTests {
    @Test func theFieldsItNamesAreTheKeysItsRequestTakes() throws {
        let full = HoldRequestBody(
            host: "a.org", method: "GET", url: "x", kind: "data", all: false, once: true, response: true)
        let object = try JSONDecoder().decode([String: AnyKey].self, from: JSONEncoder().encode(full))
        #expect(Set(object.keys) == Set(HoldRuleSet.requestFields))
        #expect(HoldRuleSet.kind == "holds" && HoldRuleSet.ruleName == "hold rule")
    }

    @Test func addsFromARequestAndRefusesWithTheConditionsReason() throws {
        var set = HoldRuleSet()
        let first = try set.add(HoldRequestBody(host: "*.example.org", once: true))
        #expect(first.id == 1 && first.once && first.conditions.summary == "host=*.example.org")
        #expect(throws: RuleRequestError("all holds every new task: it takes no other condition")) {
            try set.add(HoldRequestBody(method: "GET", all: true))
        }
        #expect(throws: RuleRequestError.self) { try set.add(HoldRequestBody()) }
        #expect(set.rules == [first])
        #expect(try set.add(HoldRequestBody(kind: "stream")).id == 2)
        #expect(set.remove(id: 1) == first)
        #expect(set.remove(id: 1) == nil)
        #expect(set.rules.map(\.id) == [2])
    }

    @Test func theErrorsSayWhatWasExpected() {
        #expect(
            RuleRequestError.expected(fields: HoldRuleSet.requestFields).message
                == #"expected a JSON object {"host": …, "method": …, "url": …, "kind": …, "all": …, "once": …, "response": …}"#
        )
        #expect(
            RuleRequestError.unknown(fields: ["hots"], kind: "holds", takes: ["host", "url"]).message
                == "unknown field hots: holds rules take host, url")
        #expect(
            RuleRequestError.unknown(fields: ["b", "a"], kind: "holds", takes: ["host"]).message
                == "unknown fields a, b: holds rules take host")
    }

    private struct AnyKey: Decodable {
        init(from decoder: any Decoder) {}
    }
}

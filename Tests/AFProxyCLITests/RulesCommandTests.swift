import AFProxyAPI
import FoundationEssentials
import Testing

@testable import AFProxyCLI

/// `afproxyctl rules`: what it sends and shows, from JSON alone.
@Suite struct RulesCommandTests {
    private func parse(_ arguments: [String]) throws -> Rules? {
        try AFProxyCtl.parseAsRoot(["rules"] + arguments) as? Rules
    }

    @Test func aFieldsValueIsABooleanANumberOrAString() {
        #expect(JSONValue(argument: "true") == .bool(true))
        #expect(JSONValue(argument: "false") == .bool(false))
        #expect(JSONValue(argument: "8080") == .int(8080))
        #expect(JSONValue(argument: "-1.5e3") == .double(-1500))
        #expect(JSONValue(argument: "0") == .int(0))
        for text in ["007", "inf", "nan", "0x10", "1.", ".5", "+1", "1e", "True", "", "*.example.org", "/bytes/"] {
            #expect(JSONValue(argument: text) == .string(text), "\(text)")
        }
        #expect(JSONValue(argument: #""123""#) == .string("123"))
        #expect(JSONValue(argument: #""true""#) == .string("true"))
        #expect(JSONValue(argument: #"""#) == .string(#"""#))
    }

    @Test func addSendsItsFieldsAsOneObject() throws {
        let add = try self.parse(["holds", "--add", "host=*.example.org", "once=true", "url=a=b"])
        #expect(add?.kind == "holds" && add?.add == true)
        #expect(
            try add?.body() == [
                "host": .string("*.example.org"), "once": .bool(true), "url": .string("a=b"),
            ])
        #expect(try self.parse([])?.kind == nil)
        #expect(try self.parse(["holds", "--remove", "3"])?.remove == 3)
        #expect(try self.parse(["holds", "--json"])?.json == true)
    }

    @Test func usageErrorsAreCaughtBeforeAskingTheDaemon() {
        let bad: [[String]] = [
            ["--add", "host=a"],  // no kind
            ["--remove", "1"],
            ["holds", "host=a"],  // fields without --add
            ["holds", "--add", "host"],
            ["holds", "--add", "=a"],
            ["holds", "--add", "host=a", "host=b"],
            ["holds", "--remove", "0"],
            ["holds", "--add", "host=a", "--remove", "1"],
            ["holds/1"],
        ]
        for arguments in bad {
            #expect(throws: (any Error).self, "\(arguments)") { try self.parse(arguments) }
        }
    }

    @Test func theRulesTableHasTheIdThenTheFieldsThenTheRest() throws {
        let json = """
            {"fields": ["host", "method", "once"], "kind": "holds", "rules": [
                {"caught": 3, "host": "*.example.org", "id": 1, "method": null, "once": false},
                {"caught": 0, "host": null, "id": 12, "method": "POST", "once": true, "extra": {"a": [1]}}]}
            """
        let list = try JSONDecoder().decode(RuleList<[String: JSONValue]>.self, from: Data(json.utf8))
        #expect(
            RuleTable.rules(list) == """
                ID  HOST           METHOD  ONCE   CAUGHT  EXTRA
                1   *.example.org  -       false  3       -
                12  -              POST    true   0       {"a":[1]}
                """)
        #expect(RuleTable.rules(RuleList(kind: "holds", fields: [], rules: [])) == "no rules of kind holds")
    }

    @Test func theKindsTableSaysWhatEachTakes() {
        let list = RuleKindList(kinds: [
            RuleKindSummary(kind: "holds", rule: "hold rule", fields: ["host", "method"], count: 2)
        ])
        #expect(
            RuleTable.kinds(list) == """
                KIND   RULES  FIELDS
                holds  2      host method
                """)
    }
}

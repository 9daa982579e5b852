import AFProxyAPI
import AFProxyManager
import AFProxyRules
import AFProxyTestSupport
import FoundationEssentials
import NIOCore
import Testing

@testable import AFProxyControl

#if canImport(Glibc)
import Glibc
#endif

/// `/v1/rules`: one endpoint for every kind in the rule book's list, driven through the API's
/// router with no socket; `/v1/holds` answers the same rules.
@Suite struct RulesEndpointTests {
    /// A router of its own per test: the rules added here are the test's.
    private struct API {
        let manager = SessionManager(transport: InMemoryTransport(), historyCapacity: 4)
        let router: ControlRouter

        init() {
            self.router = ControlRouter.api(
                manager: self.manager, extraStats: { _ in }, metrics: nil, web: { nil }, streams: nil)
        }

        /// The status and body of the answer, or of the refusal.
        func call(
            _ method: String, _ target: String, _ body: String? = nil, caller: ControlCaller = .socket(nil)
        ) -> (Int, String) {
            var request = ControlRouterFixture.request(method, target)
            request.caller = caller
            if let body { request.body = ByteBuffer(string: body) }
            switch self.router.route(request) {
            case .failure(let refusal):
                return (refusal.status, refusal.message)
            case .success(let dispatch):
                guard case .body(let status, _, let bytes) = dispatch.answer(request) else { return (0, "a stream") }
                return (Int(status.code), String(buffer: bytes))
            }
        }

        func decode<T: Decodable>(_ type: T.Type, _ method: String, _ target: String, _ body: String? = nil) throws -> T
        {
            try JSONDecoder().decode(T.self, from: Data(self.call(method, target, body).1.utf8))
        }
    }

    private func route(_ method: String, _ target: String) -> RulesEndpoint.Route? {
        ControlRouterFixture.route(method, target, to: RulesEndpoint.self)
    }

    /// A map-local rule keeps its caller's rights: the web's token names no one, the daemon's own
    /// user reads as the daemon, another user by its uid.
    @Test func aMapLocalRuleKeepsWhoAddedIt() {
        let api = API()
        let body = #"{"host": "a.test", "file": "/srv/a"}"#
        let me = PeerCredentials(pid: 1, uid: geteuid(), gid: getegid())
        let other = PeerCredentials(pid: 1, uid: geteuid() &+ 4242, gid: 4242)
        for (caller, expected) in [
            (ControlCaller.web, #""readAs":"anyone""#), (.socket(nil), #""readAs":"anyone""#),
            (.socket(me), #""readAs":"daemon""#),
            (.socket(other), #""readAs":{"groups":[4242],"uid":\#(geteuid() &+ 4242)}"#),
        ] {
            let (status, answer) = api.call("POST", "/v1/rules/map-local", body, caller: caller)
            #expect(status == 201 && answer.contains(expected), "\(caller): \(answer)")
        }
    }

    @Test func routesTheKindsAndEachKindsCollection() {
        #expect(self.route("GET", "/v1/rules") == .kinds)
        #expect(self.route("GET", "/v1/rules/holds") == .kind("holds", .list))
        #expect(self.route("POST", "/v1/rules/holds") == .kind("holds", .add))
        #expect(self.route("DELETE", "/v1/rules/holds/12") == .kind("holds", .remove(12)))
    }

    @Test func refusesAnUnknownKindAWrongMethodAndABadIdPrecisely() {
        func refusal(_ method: String, _ target: String) -> RouteRefusal? {
            ControlRouterFixture.refusal(method, target)
        }
        #expect(
            refusal("GET", "/v1/rules/blocks")
                == RouteRefusal(
                    status: 404, message: "no such rule kind: blocks (kinds: holds, records, map-remote, map-local)"))
        #expect(refusal("DELETE", "/v1/rules/blocks/1")?.status == 404)
        #expect(refusal("POST", "/v1/rules") == .notAllowed("POST", on: "/v1/rules"))
        #expect(refusal("PUT", "/v1/rules/holds")?.status == 405)
        #expect(refusal("GET", "/v1/rules/holds/3")?.status == 405)
        #expect(refusal("DELETE", "/v1/rules/holds/1/2")?.status == 404)
        #expect(
            refusal("DELETE", "/v1/rules/holds/x")
                == RouteRefusal(status: 400, message: "hold rule id must be a positive integer, not x"))
        // Rule edits write their file off the loop themselves.
        let dispatch = try? ControlRouterFixture.router.route(ControlRouterFixture.request("POST", "/v1/rules/holds"))
            .get()
        #expect(dispatch?.blocks == false)
    }

    @Test func addsListsAndRemovesHoldRulesWhichHoldsAnswersToo() throws {
        let api = API()
        let (status, body) = api.call("POST", "/v1/rules/holds", #"{"host": "*.example.org", "once": true}"#)
        #expect(status == 201)
        let added = try JSONDecoder().decode(HoldRule.self, from: Data(body.utf8))
        #expect(added.id == 1 && added.once && added.conditions.summary == "host=*.example.org")
        #expect(api.call("POST", "/v1/holds", #"{"method": "POST"}"#).0 == 201)

        let list = try api.decode(RuleList<HoldRule>.self, "GET", "/v1/rules/holds")
        #expect(list.kind == "holds" && list.fields == HoldRuleSet.requestFields)
        #expect(list.rules.map(\.id) == [1, 2])
        #expect(try api.decode(HoldList.self, "GET", "/v1/holds").holds == list.rules)
        #expect(
            try api.decode(RuleKindList.self, "GET", "/v1/rules").kinds == [
                RuleKindSummary(kind: "holds", rule: "hold rule", fields: HoldRuleSet.requestFields, count: 2),
                RuleKindSummary(kind: "records", rule: "record rule", fields: RecordRuleSet.requestFields, count: 0),
                RuleKindSummary(
                    kind: "map-remote", rule: "map-remote rule", fields: MapRemoteRuleSet.requestFields, count: 0),
                RuleKindSummary(
                    kind: "map-local", rule: "map-local rule", fields: MapLocalRuleSet.requestFields, count: 0),
            ])

        #expect(try api.decode(HoldRule.self, "DELETE", "/v1/rules/holds/1") == added)
        #expect(api.call("DELETE", "/v1/holds/2").0 == 200)
        #expect(api.manager.rules.holds.all.isEmpty)
    }

    @Test func saysWhatIsWrongWithABodyOrAnId() throws {
        let api = API()
        func error(_ method: String, _ target: String, _ body: String? = nil) throws -> (Int, String) {
            let (status, text) = api.call(method, target, body)
            return (status, try JSONDecoder().decode(ControlErrorBody.self, from: Data(text.utf8)).error)
        }
        let expected =
            #"expected a JSON object {"host": …, "method": …, "url": …, "kind": …, "all": …, "once": …, "response": …}"#
        #expect(try error("POST", "/v1/rules/holds", "not json") == (400, expected))
        #expect(try error("POST", "/v1/rules/holds", #"{"all": "yes"}"#) == (400, expected))
        #expect(
            try error("POST", "/v1/rules/holds", #"{"hots": "a.org"}"#)
                == (400, "unknown field hots: holds rules take host, method, url, kind, all, once, response"))
        #expect(try error("POST", "/v1/rules/holds", #"{"url": "("}"#).1.contains("regular expression"))
        #expect(try error("DELETE", "/v1/rules/holds/9") == (404, "no hold rule with id 9"))
        #expect(try error("DELETE", "/v1/holds/9") == (404, "no hold rule with id 9"))
        #expect(try error("POST", "/v1/holds", "[]") == (400, expected))
        // `/v1/holds` ignores keys it does not know, as it always has.
        #expect(api.call("POST", "/v1/holds", #"{"host": "a.org", "note": "x"}"#).0 == 201)
        #expect(api.manager.rules.holds.all.count == 1)
    }

    /// A kind the endpoint was never told about by name is served from the list alone.
    @Test func servesAnyKindInTheList() throws {
        let endpoint = RulesEndpoint(kinds: [LiveRules(LabelRuleSet())])
        var router = ControlRouter()
        router.add("rules", endpoint)
        func call(_ method: String, _ target: String, _ body: String? = nil) throws -> (Int, String) {
            var request = ControlRouterFixture.request(method, target)
            if let body { request.body = ByteBuffer(string: body) }
            let dispatch = try router.route(request).get()
            guard case .body(let status, _, let bytes) = dispatch.answer(request) else { return (0, "") }
            return (Int(status.code), String(buffer: bytes))
        }
        #expect(try call("POST", "/v1/rules/labels", #"{"label": "a"}"#) == (201, #"{"id":1,"label":"a"}"# + "\n"))
        #expect(
            try call("GET", "/v1/rules/labels")
                == (200, #"{"fields":["label"],"kind":"labels","rules":[{"id":1,"label":"a"}]}"# + "\n"))
        #expect(
            try call("GET", "/v1/rules")
                == (200, #"{"kinds":[{"count":1,"fields":["label"],"kind":"labels","rule":"label rule"}]}"# + "\n"))
        #expect(try call("DELETE", "/v1/rules/labels/1").0 == 200)
        #expect(try call("DELETE", "/v1/rules/labels/1") == (404, #"{"error":"no label rule with id 1"}"# + "\n"))
    }
}

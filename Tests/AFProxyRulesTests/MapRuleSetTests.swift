import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyRules

/// Map-remote and map-local rules as values: what they name, where a request goes or which file
/// answers it, and what they refuse.
@Suite struct MapRuleSetTests {
    private func remote(_ host: String, _ path: String?, _ to: String) throws -> MapRemoteRuleSet {
        var set = MapRemoteRuleSet()
        _ = try set.add(MapRemoteRequestBody(host: host, path: path, to: to))
        return set
    }

    @Test func remoteKeepsWhatFollowsThePrefix() throws {
        let set = try self.remote("api.test", "/v1/*", "http://127.0.0.1:8080/v2/")
        #expect(
            set.target(host: "api.test", url: "http://api.test/v1/items?x=1")?.url
                == "http://127.0.0.1:8080/v2/items?x=1")
        #expect(set.target(host: "api.test", url: "http://api.test/v1/")?.url == "http://127.0.0.1:8080/v2/")
        #expect(set.target(host: "api.test", url: "http://api.test/v2/items") == nil)
        #expect(set.target(host: "other.test", url: "http://other.test/v1/items") == nil)
        let whole = try self.remote("*.api.test", nil, "https://h.test:8443")
        #expect(whole.target(host: "eu.api.test", url: "http://eu.api.test/a/b?c")?.url == "https://h.test:8443/a/b?c")
        #expect(whole.target(host: "eu.api.test", url: "http://eu.api.test?c")?.url == "https://h.test:8443/?c")
        let joined = try self.remote("api.test", "/v1", "http://h.test/base")
        #expect(joined.target(host: "api.test", url: "http://api.test/v1/x")?.url == "http://h.test/base/x")
    }

    @Test(arguments: [
        "not a url", "ftp://h.test/", "http://", "http://u:p@h.test/", "http://h.test/?q=1", "http://h.test/#f",
        "http://h.test/a b",
    ])
    func remoteRefusesWhatIsNotAnOrigin(to: String) {
        var set = MapRemoteRuleSet()
        #expect(throws: RuleRequestError.self) { try set.add(MapRemoteRequestBody(host: "api.test", to: to)) }
        #expect(set.rules.isEmpty)
    }

    @Test func localAnswersFromAFileOrUnderADirectory() throws {
        var set = MapLocalRuleSet()
        _ = try set.add(MapLocalRequestBody(host: "app.test", path: "/static/", file: "/srv/site/"))
        _ = try set.add(MapLocalRequestBody(host: "api.test", file: "/srv/fixture.json"))
        #expect(
            set.answer(host: "app.test", url: "http://app.test/static/css/a.css?v=2")?.file == "/srv/site/css/a.css")
        #expect(set.answer(host: "app.test", url: "http://app.test/static/")?.file == "/srv/site/index.html")
        #expect(set.answer(host: "app.test", url: "http://app.test/static/docs/")?.file == "/srv/site/docs/index.html")
        #expect(set.answer(host: "app.test", url: "http://app.test/static/a%20b.txt")?.file == "/srv/site/a b.txt")
        #expect(set.answer(host: "app.test", url: "http://app.test/other") == nil)
        #expect(set.answer(host: "api.test", url: "http://api.test/anything/at/all")?.file == "/srv/fixture.json")
        for escape in ["/static/../etc/passwd", "/static/%2e%2e/x", "/static/a/%2F..%2Fb", "/static/%00"] {
            let plan = set.answer(host: "app.test", url: "http://app.test" + escape)
            #expect(plan == MapLocalPlan(rule: 1, file: nil, readAs: .anyone), "\(escape)")
        }
    }

    @Test func localRefusesARelativeFile() {
        var set = MapLocalRuleSet()
        #expect(throws: RuleRequestError.self) { try set.add(MapLocalRequestBody(host: "a.test", file: "site/")) }
        #expect(throws: RuleRequestError.self) {
            try set.add(MapLocalRequestBody(host: "a.test", path: "x", file: "/srv/"))
        }
    }

    @Test func aLocalRuleKeepsItsAuthorsRights() throws {
        var set = MapLocalRuleSet()
        let user = ReadRights.user(uid: 1000, groups: [1000, 27])
        _ = try set.add(MapLocalRequestBody(host: "a.test", file: "/srv/a"), readingAs: user)
        _ = try set.add(MapLocalRequestBody(host: "b.test", file: "/srv/b"), readingAs: .daemon)
        _ = try set.add(MapLocalRequestBody(host: "c.test", file: "/srv/c"))  // no caller named: anyone's
        #expect(set.answer(host: "a.test", url: "http://a.test/")?.readAs == user)
        #expect(set.answer(host: "b.test", url: "http://b.test/")?.readAs == .daemon)
        #expect(set.answer(host: "c.test", url: "http://c.test/")?.readAs == .anyone)
        // Kept so in its state file; one saved before rules had authors reads as anyone's.
        let old = #"{"rules": [{"id": 1, "host": "a.test", "path": null, "file": "/srv/a"}], "nextID": 2}"#
        #expect(try JSONDecoder().decode(MapLocalRuleSet.self, from: Data(old.utf8)).rules[0].readAs == .anyone)
        let json = String(decoding: try JSONEncoder().encode(set.rules[0]), as: UTF8.self)
        #expect(json.contains(#""readAs":{"#) && json.contains(#""uid":1000"#), "\(json)")
    }

    @Test func rulesRoundTripThroughTheirStateFile() throws {
        var local = MapLocalRuleSet()
        _ = try local.add(MapLocalRequestBody(host: "*.app.test", path: "/s/*", file: "/srv/"))
        _ = try local.add(MapLocalRequestBody(host: "b.test", file: "/srv/b"), readingAs: .user(uid: 7, groups: [7]))
        _ = try local.add(MapLocalRequestBody(host: "c.test", file: "/srv/c"), readingAs: .daemon)
        let decoded = try JSONDecoder().decode(MapLocalRuleSet.self, from: try JSONEncoder().encode(local))
        #expect(decoded == local)
        let remote = try self.remote("10.0.0.0/8", nil, "http://127.0.0.1:1/")
        #expect(try JSONDecoder().decode(MapRemoteRuleSet.self, from: try JSONEncoder().encode(remote)) == remote)
    }

    @Test func mediaTypesFollowTheFileName() {
        #expect(MediaType.forFile(named: "/a/b/index.HTML") == "text/html; charset=utf-8")
        #expect(MediaType.forFile(named: "x.json") == "application/json")
        #expect(MediaType.forFile(named: "/a.b/noext") == "application/octet-stream")
        #expect(MediaType.forFile(named: ".hidden") == "application/octet-stream")
    }
}

import Testing

@testable import AFProxyListener

@Suite struct KnownOriginTests {
    let origin = KnownOrigin(host: "api.test", port: 443)

    func url(_ uri: String, host: String? = "api.test") -> String? {
        try? self.origin.url(for: uri, host: host).get().text
    }

    func status(_ uri: String, host: String? = "api.test") -> Int? {
        guard case .failure(let refusal) = self.origin.url(for: uri, host: host) else { return nil }
        return Int(refusal.status.code)
    }

    @Test func originFormGoesToTheConnectTarget() {
        #expect(self.url("/a/b?c=d") == "https://api.test/a/b?c=d")
        #expect(self.url("/x#frag") == "https://api.test/x")
        #expect(self.url("/", host: nil) == "https://api.test/")
        #expect(self.url("/", host: "API.test:443") == "https://api.test/")
    }

    @Test func aPortOtherThan443IsInTheURL() throws {
        let origin = KnownOrigin(host: "127.0.0.1", port: 8443)
        #expect(try origin.url(for: "/p", host: "127.0.0.1:8443").get().text == "https://127.0.0.1:8443/p")
        let v6 = KnownOrigin(host: "::1", port: 443)
        #expect(try v6.url(for: "/p", host: "[::1]").get().text == "https://[::1]/p")
    }

    @Test func absoluteFormOfTheSameOriginIsTaken() {
        #expect(self.url("https://api.test/q") == "https://api.test/q")
        #expect(self.url("https://api.test:443") == "https://api.test/")
    }

    @Test func anotherOriginIs421() {
        #expect(self.status("/", host: "other.test") == 421)
        #expect(self.status("/", host: "api.test:8443") == 421)
        #expect(self.status("https://other.test/") == 421)
    }

    @Test func otherTargetsAre400() {
        #expect(self.status("*") == 400)
        #expect(self.status("http://api.test/") == 400)
        #expect(self.status("/a b") == 400)
        #expect(self.status("/\u{7f}") == 400)
    }

    @Test func plainHTTPDefaultsToPort80() throws {
        let origin = KnownOrigin(host: "api.test", port: 80, tls: false)
        #expect(try origin.url(for: "/p", host: "api.test").get().text == "http://api.test/p")
        #expect(try origin.url(for: "http://api.test:80/q", host: nil).get().text == "http://api.test/q")
        let other = KnownOrigin(host: "api.test", port: 8080, tls: false)
        #expect(try other.url(for: "/p", host: "api.test:8080").get().text == "http://api.test:8080/p")
        guard case .failure(let refusal) = other.url(for: "/p", host: "api.test") else {
            Issue.record("port 80 is not the destination's 8080")
            return
        }
        #expect(refusal.status.code == 421)
    }

    @Test func aCapturedConnectionGoesWhereHostSays() throws {
        let origin = KnownOrigin(host: "127.0.0.1", port: 8080, tls: false, followsHost: true)
        #expect(try origin.url(for: "/p?q", host: "app.test:8080").get().text == "http://app.test:8080/p?q")
        #expect(try origin.url(for: "/p", host: nil).get().text == "http://127.0.0.1:8080/p")
        #expect(
            try origin.url(for: "http://elsewhere.test/x", host: "app.test").get().text == "http://elsewhere.test/x")
        #expect((try? origin.url(for: "/p", host: "bad host").get()) == nil)
        #expect((try? origin.url(for: "https://app.test/", host: nil).get()) == nil)
    }
}

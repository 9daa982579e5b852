import Testing

@testable import AFProxyListener

@Suite struct InterceptedOriginTests {
    let origin = InterceptedOrigin(host: "api.test", port: 443)

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
        let origin = InterceptedOrigin(host: "127.0.0.1", port: 8443)
        #expect(try origin.url(for: "/p", host: "127.0.0.1:8443").get().text == "https://127.0.0.1:8443/p")
        let v6 = InterceptedOrigin(host: "::1", port: 443)
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
}

import AFProxyModel
import Testing

@Suite struct WebAccessTests {
    let token = String(repeating: "ab", count: 32)
    var access: WebAccess { WebAccess(token: self.token, host: "127.0.0.1", port: 3129) }
    var cookie: String { "afproxy-token-3129=\(self.token)" }

    func decide(
        _ method: String = "GET", _ target: String = "/v1/tasks", host: String? = "127.0.0.1:3129",
        origin: String? = nil, cookie: [String] = [], authorization: String? = nil
    ) -> WebAccess.Decision {
        self.access.decide(
            .init(
                method: method, target: target, host: host, origin: origin, cookie: cookie,
                authorization: authorization))
    }

    func status(_ decision: WebAccess.Decision) -> Int? {
        if case .refuse(let status, _) = decision { return status }
        return nil
    }

    @Test func withoutATokenEverythingIs401() {
        #expect(self.status(self.decide("GET", "/")) == 401)
        #expect(self.status(self.decide("GET", "/app.js")) == 401)
        #expect(self.status(self.decide("GET", "/v1/events")) == 401)
        #expect(self.status(self.decide("POST", "/v1/tasks/1/cancel", origin: "http://127.0.0.1:3129")) == 401)
    }

    @Test func aWrongTokenIs401WhereverItComesFrom() {
        let wrong = String(repeating: "ab", count: 31) + "ac"
        #expect(self.status(self.decide("GET", "/?token=\(wrong)")) == 401)
        #expect(self.status(self.decide(authorization: "Bearer \(wrong)")) == 401)
        #expect(self.status(self.decide(cookie: ["afproxy-token-3129=\(wrong)"])) == 401)
        #expect(self.status(self.decide(authorization: "Bearer \(self.token)x")) == 401)
        #expect(self.status(self.decide(authorization: "Bearer ")) == 401)
        // Another port's dashboard has its own cookie.
        #expect(self.status(self.decide(cookie: ["afproxy-token-3130=\(self.token)"])) == 401)
    }

    @Test func theTokenInTheQuerySetsTheCookieAndLeavesTheAddress() {
        let decision = self.decide("GET", "/?token=\(self.token)")
        #expect(
            decision
                == .enter(
                    setCookie: "afproxy-token-3129=\(self.token); Path=/; HttpOnly; SameSite=Strict", location: "/"))
        // Only the page's entry takes it from the query: the API wants a header.
        #expect(self.status(self.decide("GET", "/v1/tasks?token=\(self.token)")) == 401)
    }

    @Test func theCookieOrABearerTokenLetsIn() {
        #expect(self.decide(cookie: [self.cookie]) == .allow)
        #expect(self.decide(cookie: ["theme=dark; \(self.cookie); other=1"]) == .allow)
        #expect(self.decide(cookie: ["theme=dark", self.cookie]) == .allow)
        #expect(self.decide(authorization: "Bearer \(self.token)") == .allow)
        #expect(self.decide(authorization: "bearer \(self.token)") == .allow)
        #expect(self.decide("GET", "/", cookie: [self.cookie]) == .allow)
    }

    @Test func anotherHostIsMisdirectedEvenWithTheToken() {
        let bearer = "Bearer \(self.token)"
        #expect(self.status(self.decide(host: "attacker.example:3129", authorization: bearer)) == 421)
        #expect(self.status(self.decide(host: "127.0.0.1:3130", authorization: bearer)) == 421)
        #expect(self.status(self.decide(host: "127.0.0.1", authorization: bearer)) == 421)
        #expect(self.status(self.decide(host: nil, authorization: bearer)) == 421)
        #expect(self.status(self.decide("GET", "/?token=\(self.token)", host: "rebound.example:3129")) == 421)
        // A loopback dashboard also answers to localhost, as people type it.
        #expect(self.decide(host: "localhost:3129", authorization: bearer) == .allow)
        #expect(self.decide(host: "LOCALHOST:3129", authorization: bearer) == .allow)
    }

    @Test func aForeignOriginIsRefused() {
        let bearer = "Bearer \(self.token)"
        #expect(
            self.status(self.decide("POST", "/v1/tasks/1/cancel", origin: "http://evil.example", cookie: [self.cookie]))
                == 403)
        #expect(self.status(self.decide(origin: "http://127.0.0.1:3130", authorization: bearer)) == 403)
        #expect(self.status(self.decide(origin: "https://127.0.0.1:3129", authorization: bearer)) == 403)
        #expect(self.status(self.decide(origin: "null", authorization: bearer)) == 403)
        #expect(
            self.decide("POST", "/v1/tasks/1/cancel", origin: "http://127.0.0.1:3129", cookie: [self.cookie]) == .allow)
        #expect(
            self.decide(
                "POST", "/v1/tasks/1/cancel", host: "localhost:3129", origin: "http://localhost:3129",
                cookie: [self.cookie]) == .allow)
    }

    @Test func aChangeByCookieNeedsTheOrigin() {
        #expect(self.status(self.decide("POST", "/v1/tasks/1/cancel", cookie: [self.cookie])) == 403)
        #expect(self.status(self.decide("POST", "/v1/downloads", cookie: [self.cookie])) == 403)
        #expect(self.decide("POST", "/v1/tasks/1/cancel", authorization: "Bearer \(self.token)") == .allow)
        #expect(self.decide("HEAD", "/", cookie: [self.cookie]) == .allow)
    }

    @Test func anIPv6DashboardNamesItselfInBrackets() {
        let access = WebAccess(token: self.token, host: "::1", port: 8080)
        #expect(access.url == "http://[::1]:8080/")
        #expect(access.authorities == ["[::1]:8080", "localhost:8080"])
        let named = WebAccess(token: self.token, host: "dash.example", port: 80)
        #expect(named.authorities == ["dash.example:80", "dash.example"])
    }
}

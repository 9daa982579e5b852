import AFProxyModel
import AFProxyRules
import Testing

@testable import AFProxyControl

@Suite struct ThrottleEndpointTests {
    private func route(_ method: String, _ target: String) -> ThrottleEndpoint.Route? {
        ControlRouterFixture.route(method, target, to: ThrottleEndpoint.self)
    }

    private func refusal(_ method: String, _ target: String) -> RouteRefusal? {
        ControlRouterFixture.refusal(method, target)
    }

    @Test func routesEveryThrottleEndpoint() throws {
        let cidr = ThrottleScope.host(try HostPattern("10.0.0.0/8"))
        #expect(self.route("GET", "/v1/throttle") == .list)
        #expect(self.route("PUT", "/v1/throttle/global") == .set(.global))
        #expect(self.route("PUT", "/v1/throttle/tasks/42") == .set(.task(42)))
        #expect(
            self.route("PUT", "/v1/throttle/hosts/*.example.org")
                == .set(.host(try HostPattern("*.example.org"))))
        #expect(self.route("PUT", "/v1/throttle/hosts/10.0.0.0%2F8") == .set(cidr))
        #expect(self.route("DELETE", "/v1/throttle/global") == .remove(.global, directions: [.down, .up]))
        #expect(
            self.route("DELETE", "/v1/throttle/tasks/7?direction=up") == .remove(.task(7), directions: [.up])
        )
        #expect(
            self.route("DELETE", "/v1/throttle/hosts/10.0.0.0%2F8?direction=down")
                == .remove(cidr, directions: [.down]))
    }

    @Test func refusesPrecisely() {
        #expect(self.refusal("POST", "/v1/throttle")?.status == 405)
        #expect(self.refusal("GET", "/v1/throttle/global")?.status == 405)
        #expect(self.refusal("PUT", "/v1/throttle/tasks/0")?.status == 400)
        #expect(self.refusal("PUT", "/v1/throttle/tasks/x")?.status == 400)
        #expect(self.refusal("PUT", "/v1/throttle/hosts/bad%20host")?.message.hasPrefix("expected a host name") == true)
        #expect(self.refusal("PUT", "/v1/throttle/elsewhere")?.status == 404)
        #expect(self.refusal("PUT", "/v1/throttle/tasks/1/2")?.status == 404)
        #expect(self.refusal("DELETE", "/v1/throttle/global?direction=sideways")?.status == 400)
    }
}

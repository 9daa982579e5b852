import AFProxyControl
import AFProxyModel
import Testing

@Suite struct ThrottleRouteTests {
    private func route(_ method: String, _ target: String) -> ControlRoute? {
        try? ControlRoute.parse(method: method, target: target).get()
    }

    private func refusal(_ method: String, _ target: String) -> ControlRoute.Refusal? {
        if case .failure(let refusal) = ControlRoute.parse(method: method, target: target) { return refusal }
        return nil
    }

    @Test func routesEveryThrottleEndpoint() throws {
        let cidr = ThrottleScope.host(try HostPattern("10.0.0.0/8"))
        #expect(self.route("GET", "/v1/throttle") == .throttle(.list))
        #expect(self.route("PUT", "/v1/throttle/global") == .throttle(.set(.global)))
        #expect(self.route("PUT", "/v1/throttle/tasks/42") == .throttle(.set(.task(42))))
        #expect(
            self.route("PUT", "/v1/throttle/hosts/*.example.org")
                == .throttle(.set(.host(try HostPattern("*.example.org")))))
        #expect(self.route("PUT", "/v1/throttle/hosts/10.0.0.0%2F8") == .throttle(.set(cidr)))
        #expect(self.route("DELETE", "/v1/throttle/global") == .throttle(.remove(.global, directions: [.down, .up])))
        #expect(
            self.route("DELETE", "/v1/throttle/tasks/7?direction=up") == .throttle(.remove(.task(7), directions: [.up]))
        )
        #expect(
            self.route("DELETE", "/v1/throttle/hosts/10.0.0.0%2F8?direction=down")
                == .throttle(.remove(cidr, directions: [.down])))
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

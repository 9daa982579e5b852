import Testing

@testable import AFProxyControl

@Suite struct HoldsEndpointTests {
    private func route(_ method: String, _ target: String) -> HoldsEndpoint.Route? {
        ControlRouterFixture.route(method, target, to: HoldsEndpoint.self)
    }

    @Test func routesTheHoldEndpoints() {
        #expect(self.route("GET", "/v1/holds") == .list)
        #expect(self.route("POST", "/v1/holds") == .add)
        #expect(self.route("DELETE", "/v1/holds/12") == .remove(12))
    }

    @Test func refusesWithThePreciseStatus() {
        func status(_ method: String, _ target: String) -> Int? {
            ControlRouterFixture.refusal(method, target)?.status
        }
        #expect(status("PUT", "/v1/holds") == 405)
        #expect(status("GET", "/v1/holds/3") == 405)
        #expect(status("DELETE", "/v1/holds") == 405)
        #expect(status("DELETE", "/v1/holds/0") == 400)
        #expect(status("DELETE", "/v1/holds/x") == 400)
        #expect(status("DELETE", "/v1/holds/1/2") == 404)
        #expect(
            ControlRouterFixture.refusal("DELETE", "/v1/holds/x")?.message
                == "hold rule id must be a positive integer, not x")
    }
}

import AFProxyControl
import Testing

@Suite struct ControlRouteHoldsTests {
    private func parse(_ method: String, _ target: String) -> Result<ControlRoute, ControlRoute.Refusal> {
        ControlRoute.parse(method: method, target: target)
    }

    @Test func routesTheHoldEndpoints() throws {
        #expect(try self.parse("GET", "/v1/holds").get() == .holds(.list))
        #expect(try self.parse("POST", "/v1/holds").get() == .holds(.add))
        #expect(try self.parse("DELETE", "/v1/holds/12").get() == .holds(.remove(12)))
    }

    @Test func refusesWithThePreciseStatus() {
        func status(_ method: String, _ target: String) -> Int? {
            if case .failure(let refusal) = self.parse(method, target) { return refusal.status }
            return nil
        }
        #expect(status("PUT", "/v1/holds") == 405)
        #expect(status("GET", "/v1/holds/3") == 405)
        #expect(status("DELETE", "/v1/holds") == 405)
        #expect(status("DELETE", "/v1/holds/0") == 400)
        #expect(status("DELETE", "/v1/holds/x") == 400)
        #expect(status("DELETE", "/v1/holds/1/2") == 404)
    }
}

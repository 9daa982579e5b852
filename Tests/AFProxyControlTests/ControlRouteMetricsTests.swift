import AFProxyControl
import Testing

/// `/metrics` lives outside /v1, where Prometheus scrapers look for it.
@Suite struct ControlRouteMetricsTests {
    @Test func routesGetMetrics() throws {
        #expect(try ControlRoute.parse(method: "GET", target: "/metrics").get() == .metrics)
        #expect(try ControlRoute.parse(method: "GET", target: "/metrics?x=1").get() == .metrics)
    }

    @Test func refusesOtherMethodsAndPaths() {
        for (method, target, status) in [
            ("POST", "/metrics", 405), ("GET", "/metrics/x", 404), ("GET", "/v1/metrics", 404),
        ] {
            guard case .failure(let refusal) = ControlRoute.parse(method: method, target: target) else {
                Issue.record("\(method) \(target) was routed")
                continue
            }
            #expect(refusal.status == status)
        }
    }
}

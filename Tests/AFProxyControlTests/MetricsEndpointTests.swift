import Testing

@testable import AFProxyControl

/// `/metrics` lives outside /v1, where Prometheus scrapers look for it.
@Suite struct MetricsEndpointTests {
    @Test func routesGetMetrics() {
        #expect(ControlRouterFixture.route("GET", "/metrics", to: MetricsEndpoint.self) == .metrics)
        #expect(ControlRouterFixture.route("GET", "/metrics?x=1", to: MetricsEndpoint.self) == .metrics)
    }

    @Test func refusesOtherMethodsAndPaths() {
        for (method, target, status) in [
            ("POST", "/metrics", 405), ("GET", "/metrics/x", 404), ("GET", "/v1/metrics", 404),
        ] {
            #expect(ControlRouterFixture.refusal(method, target)?.status == status, "\(method) \(target)")
        }
    }
}

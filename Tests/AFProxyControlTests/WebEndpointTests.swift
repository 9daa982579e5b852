import Testing

@testable import AFProxyControl

@Suite struct WebEndpointTests {
    @Test func webIsAGetUnderV1() {
        #expect(ControlRouterFixture.route("GET", "/v1/web", to: WebEndpoint.self) == .web)
        #expect(ControlRouterFixture.route("GET", "/v1/web?x=1", to: WebEndpoint.self) == .web)
        #expect(ControlRouterFixture.refusal("POST", "/v1/web")?.status == 405)
        #expect(ControlRouterFixture.refusal("GET", "/v1/web/1")?.status == 404)
    }
}

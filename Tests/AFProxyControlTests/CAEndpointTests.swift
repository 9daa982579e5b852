import NIOHTTP1
import Testing

@testable import AFProxyControl

@Suite struct CAEndpointTests {
    @Test func caIsAGetAndRegenerateAPost() throws {
        #expect(ControlRouterFixture.route("GET", "/v1/ca", to: CAEndpoint.self) == .show)
        #expect(ControlRouterFixture.route("POST", "/v1/ca/regenerate", to: CAEndpoint.self) == .regenerate)
        #expect(ControlRouterFixture.refusal("POST", "/v1/ca")?.status == 405)
        #expect(ControlRouterFixture.refusal("GET", "/v1/ca/regenerate")?.status == 405)
        #expect(ControlRouterFixture.refusal("GET", "/v1/ca/key")?.status == 404)
        // Both may make a key and write files: never on an event loop.
        let dispatch = try ControlRouterFixture.router.route(ControlRouterFixture.request("GET", "/v1/ca")).get()
        #expect(dispatch.blocks)
    }

    @Test func aDaemonWithoutACAAnswers503() {
        guard
            case .body(let status, _, _) = CAEndpoint(authority: nil).answer(
                .show, to: ControlRouterFixture.request("GET", "/v1/ca"))
        else {
            Issue.record("not a body")
            return
        }
        #expect(status == .serviceUnavailable)
    }
}

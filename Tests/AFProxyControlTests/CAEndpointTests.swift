import NIOCore
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

    /// `make run`'s quick build has no TLS stack: the CA routes and adding an intercept rule say
    /// so (501, with the way to a build that has it), and no rule is added that would do nothing.
    @Test func aDaemonBuiltWithoutInterceptionAnswers501AndAddsNoRule() {
        let missing = InterceptionNotBuilt()
        for route in [CAEndpoint.Route.show, .regenerate] {
            guard
                case .body(let status, _, let body) = CAEndpoint(authority: missing).answer(
                    route, to: ControlRouterFixture.request("GET", "/v1/ca"))
            else {
                Issue.record("not a body")
                return
            }
            #expect(status == .notImplemented)
            #expect(String(buffer: body).contains("built without HTTPS interception"))
        }
        let manager = ControlRouterFixture.manager
        var request = ControlRouterFixture.request("POST", "/v1/intercept")
        request.body = ByteBuffer(string: #"{"host": "example.test"}"#)
        guard
            case .body(let status, _, let body) = InterceptEndpoint(manager: manager, authority: missing).answer(
                .add, to: request)
        else {
            Issue.record("not a body")
            return
        }
        #expect(status == .notImplemented)
        #expect(String(buffer: body).contains("make build"))
        #expect(!manager.rules.intercept.isActive)
    }
}

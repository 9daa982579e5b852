import Testing

@testable import AFProxyControl

/// The router only finds the endpoint: each resource to its own, everything else refused with the
/// message the API has always given.
@Suite struct ControlRouterTests {
    @Test func routesEachResourceToItsEndpoint() {
        #expect(ControlRouterFixture.route("GET", "/v1/events", to: EventsEndpoint.self) == .events)
        #expect(ControlRouterFixture.route("GET", "/v1/live", to: LiveEndpoint.self) == .live)
        #expect(ControlRouterFixture.route("GET", "/v1/stats", to: StatsEndpoint.self) == .stats)
        #expect(ControlRouterFixture.route("GET", "/v1/status", to: StatusEndpoint.self) == .status)
        #expect(ControlRouterFixture.route("POST", "/v1/downloads", to: DownloadsEndpoint.self) == .start)
        #expect(
            ControlRouterFixture.route("GET", "/v1/pin?host=h.test&port=8443", to: PinEndpoint.self)
                == .pin(host: "h.test", port: 8443))
        #expect(
            ControlRouterFixture.route("GET", "/v1/pin?host=h.test", to: PinEndpoint.self)
                == .pin(host: "h.test", port: 443))
        #expect(ControlRouterFixture.route("GET", "/v1/tasks", to: StatsEndpoint.self) == nil)
    }

    @Test func refusesWhatNoEndpointTakes() {
        #expect(
            ControlRouterFixture.refusal("GET", "/v2/tasks")
                == RouteRefusal(status: 404, message: "no such endpoint: /v2/tasks (the API lives under /v1)"))
        #expect(
            ControlRouterFixture.refusal("GET", "/v1")
                == RouteRefusal(status: 404, message: "no such endpoint: /v1 (the API lives under /v1)"))
        #expect(ControlRouterFixture.refusal("GET", "/v1/nothing") == .noSuchEndpoint("/v1/nothing"))
        #expect(ControlRouterFixture.refusal("POST", "/v1/status") == .notAllowed("POST", on: "/v1/status"))
        #expect(ControlRouterFixture.refusal("GET", "/v1/status/network") == .noSuchEndpoint("/v1/status/network"))
        #expect(ControlRouterFixture.refusal("GET", "/v1/downloads")?.status == 405)
        #expect(ControlRouterFixture.refusal("GET", "/v1/pin")?.message == "GET /v1/pin needs ?host=NAME[&port=N]")
        #expect(ControlRouterFixture.refusal("GET", "/v1/pin?host=h&port=0")?.message == "port must be from 1 to 65535")
    }

    /// The answers that wait on a disk or the network run off the event loop; the others not.
    @Test func blockingRoutesAreTheOnesThatWait() throws {
        func blocks(_ method: String, _ target: String) throws -> Bool {
            try ControlRouterFixture.router.route(ControlRouterFixture.request(method, target)).get().blocks
        }
        #expect(try blocks("GET", "/v1/pin?host=h.test"))
        #expect(try blocks("POST", "/v1/downloads"))
        #expect(try !blocks("PUT", "/v1/throttle/global"))  // the rule book's file writes off the loop
        #expect(try !blocks("DELETE", "/v1/throttle/global"))
        #expect(try !blocks("GET", "/v1/throttle"))
        #expect(try !blocks("GET", "/v1/tasks"))
        #expect(try !blocks("POST", "/v1/holds"))
        #expect(try !blocks("GET", "/v1/events"))
    }
}

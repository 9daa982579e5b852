import AFProxyControl
import Testing

@Suite struct ControlRouteWebTests {
    @Test func webIsAGetUnderV1() throws {
        #expect(try ControlRoute.parse(method: "GET", target: "/v1/web").get() == .web)
        #expect(try ControlRoute.parse(method: "GET", target: "/v1/web?x=1").get() == .web)
        #expect(throws: ControlRoute.Refusal.self) { try ControlRoute.parse(method: "POST", target: "/v1/web").get() }
        #expect(throws: ControlRoute.Refusal.self) { try ControlRoute.parse(method: "GET", target: "/v1/web/1").get() }
    }
}

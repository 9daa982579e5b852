import AFProxyModel
import Testing

/// The host of a URL, read once a request (`ProxyRequest.host`) for the throttle, hold and
/// parent-proxy rules.
@Suite struct LoopbackHostTests {
    @Test func theHostIsWhatLiesBetweenTheSchemeAndThePath() {
        #expect(LoopbackHost.host(ofURL: "http://h.example/x") == "h.example")
        #expect(LoopbackHost.host(ofURL: "http://h.example:8080/x?y") == "h.example")
        #expect(LoopbackHost.host(ofURL: "http://h.example?q=a/b") == "h.example")
        #expect(LoopbackHost.host(ofURL: "http://h.example#f") == "h.example")
        #expect(LoopbackHost.host(ofURL: "https://h.example") == "h.example")
        #expect(LoopbackHost.host(ofURL: "http://u:p@h.example:8080/x@y") == "h.example")
    }

    @Test func anIPv6LiteralLosesItsBracketsAndKeepsItsZone() {
        #expect(LoopbackHost.host(ofURL: "https://[::1]:443/") == "::1")
        #expect(LoopbackHost.host(ofURL: "http://[fe80::1%25eth0]:80/") == "fe80::1%25eth0")
        #expect(LoopbackHost.host(ofURL: "http://[::1]") == "::1")
    }

    @Test func theFirstSchemeSeparatorCounts() {
        #expect(LoopbackHost.host(ofURL: "a:b://h/c://d") == "h")
        #expect(LoopbackHost.host(ofURL: "x:y:z://h:1") == "h")
    }

    @Test func aURLWithoutAHostHasNone() {
        #expect(LoopbackHost.host(ofURL: "no-scheme") == nil)
        #expect(LoopbackHost.host(ofURL: "http:/h/x") == nil)
        #expect(LoopbackHost.host(ofURL: "http://") == nil)
        #expect(LoopbackHost.host(ofURL: "http:///x") == nil)
        #expect(LoopbackHost.host(ofURL: "http://:80/") == nil)
        #expect(LoopbackHost.host(ofURL: "://") == nil)
        #expect(LoopbackHost.host(ofURL: "") == nil)
    }

    @Test func aRequestReadsItsHostOnceAndAgainWhenItsURLChanges() {
        var request = ProxyRequest(method: "GET", url: "http://a.example:81/x", headers: [], body: .none, client: "c")
        #expect(request.host == "a.example")
        request.url = "http://[::1]:8080/"
        #expect(request.host == "::1")
        request.url = "not a url"
        #expect(request.host == "")
    }
}

import AFProxyModel
import AFProxyRules
import Testing

@Suite struct UpstreamProxyRouteTests {
    private let proxy = UpstreamProxy(scheme: .http, host: "proxy.example", port: 3128)

    @Test func withoutAProxyEverythingIsDirect() {
        #expect(UpstreamProxyRoute().proxy(forHost: "example.org") == nil)
    }

    @Test func loopbackIsAlwaysDirect() {
        let route = UpstreamProxyRoute(proxy: self.proxy)
        for host in ["localhost", "a.localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1"] {
            #expect(route.proxy(forHost: host) == nil, "\(host)")
        }
        #expect(route.proxy(forHost: "example.org") == self.proxy)
        #expect(route.proxy(forHost: "192.0.2.7") == self.proxy)
    }

    @Test func excludedHostsNamesDomainsAndNetworksGoDirect() throws {
        let route = UpstreamProxyRoute(
            proxy: self.proxy,
            exclude: try ["intranet.corp", "*.internal.example", "10.0.0.0/8", "2001:db8::/32"].map(HostPattern.init))
        #expect(route.proxy(forHost: "INTRANET.corp.") == nil)
        #expect(route.proxy(forHost: "wiki.internal.example") == nil)
        #expect(route.proxy(forHost: "internal.example") == self.proxy)
        #expect(route.proxy(forHost: "10.1.2.3") == nil)
        #expect(route.proxy(forHost: "[2001:db8::5]") == nil)
        #expect(route.proxy(forHost: "11.1.2.3") == self.proxy)
        #expect(route.proxy(forHost: "example.org") == self.proxy)
    }
}

@Suite struct LiveUpstreamProxyTests {
    @Test func healthFollowsTheLastConnectionAndResetsWithANewProxy() {
        let first = UpstreamProxy(
            scheme: .http, host: "proxy.example", port: 3128, credentials: .init(user: "u", password: "pw"))
        let parent = LiveUpstreamProxy()
        #expect(parent.status == nil)
        parent.update(UpstreamProxyRoute(proxy: first))
        #expect(parent.status?.proxy == "http://proxy.example:3128")
        #expect(parent.status?.error == nil)
        parent.unreachable(first, reason: "connection refused")
        #expect(parent.status?.error == "connection refused")
        parent.reached(first)
        #expect(parent.status?.error == nil)
        parent.unreachable(first, reason: "connection refused")
        parent.update(UpstreamProxyRoute(proxy: UpstreamProxy(scheme: .http, host: "other", port: 8080)))
        #expect(parent.status?.error == nil)
        // A report about the proxy a reload replaced changes nothing.
        parent.unreachable(first, reason: "late")
        #expect(parent.status?.error == nil)
        parent.update(UpstreamProxyRoute())
        #expect(parent.status == nil)
    }
}

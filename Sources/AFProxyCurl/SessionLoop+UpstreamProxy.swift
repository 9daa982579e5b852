import AFProxyModel
import AFProxyRules
import CCurl

/// A transfer through the upstream proxy (`upstream-proxy`): which transfers go through it is
/// decided here with `UpstreamProxyRoute`, not with curl's NOPROXY, so that curl's transfers and
/// the NIO tunnels follow one rule; curl then speaks to the proxy (absolute-form requests for
/// http, CONNECT for https, SOCKS5 with the name for socks5h).
extension SessionLoop {
    func configureProxy(_ handle: EasyHandle, for transfer: UpstreamTransfer) {
        let proxy = self.liveUpstreamProxy.proxy(forHost: transfer.host)
        UpstreamProxyFailure.configure(handle, proxy: proxy)
        if transfer.request.options.followsRedirects { transfer.route = self.liveUpstreamProxy }
        guard let proxy else { return }
        transfer.upstreamProxy = proxy
        transfer.liveUpstreamProxy = self.liveUpstreamProxy
        // The proxy's "200 Connection established" is not the origin's head.
        handle.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
    }

    /// What a failed transfer through the proxy means when the proxy is to blame, nil otherwise
    /// (then the origin's failure, as for a direct transfer). Also tells the proxy's health.
    func proxyFailure(_ code: CURLcode, of transfer: UpstreamTransfer, detail: String) -> TaskFailure? {
        guard let proxy = transfer.upstreamProxy, let handle = transfer.handle else { return nil }
        let failure = UpstreamProxyFailure.classify(code, of: handle, through: proxy, detail: detail)
        if failure?.code == TaskFailure.upstreamProxyUnreachable("").code {
            self.liveUpstreamProxy.unreachable(proxy, reason: failure!.message)
        } else {
            self.liveUpstreamProxy.reached(proxy)
        }
        return failure
    }
}

extension UpstreamTransfer {
    /// Before a request of this handle goes out (its prerequest callback): the URL of a redirect
    /// whose host takes the other route than the handle's, so that the transfer must go on from
    /// there on a handle of its own (`SessionLoop.reroute`); nil when the handle may go on.
    func redirectOffRoute(to current: String) -> String? {
        guard let route = self.route, current != self.url, let host = LoopbackHost.host(ofURL: current) else {
            return nil
        }
        return route.proxy(forHost: host.lowercased()) == self.upstreamProxy ? nil : current
    }
}

extension UpstreamTransfer {
    /// A final head on a transfer through the proxy: the proxy was reached. A 407 there is the
    /// proxy's own (an origin never sends one, RFC 9110 §15.5.8), so it is the proxy's refusal
    /// of our credentials, not a response for the client: passed on, it would read as a
    /// challenge from afproxy.
    func proxyAnswer(_ head: ProxyResponseHead) -> TaskFailure? {
        guard let proxy = self.upstreamProxy else { return nil }
        self.liveUpstreamProxy?.reached(proxy)
        guard head.status == 407, proxy.scheme == .http else { return nil }
        return .upstreamProxyAuth(
            "upstream proxy \(proxy) refused the credentials (407)"
                + (proxy.credentials == nil ? "; none are configured" : ""))
    }
}

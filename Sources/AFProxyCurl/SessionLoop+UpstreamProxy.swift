import AFProxyModel
import AFProxyRules
import CCurl

/// A transfer through the parent proxy (`upstream-proxy`): which transfers go through it is
/// decided here with `UpstreamProxyRoute`, not with curl's NOPROXY, so that curl's transfers and
/// the NIO tunnels follow one rule; curl then speaks to the proxy (absolute-form requests for
/// http, CONNECT for https, SOCKS5 with the name for socks5h).
extension SessionLoop {
    func configureProxy(_ handle: EasyHandle, for transfer: UpstreamTransfer) {
        let host = transfer.request.host
        guard let proxy = self.parentProxy.proxy(forHost: host) else {
            // Never inherit http_proxy from the daemon's environment: that would loop through ourselves.
            _ = handle.set(CURLOPT_PROXY, "")
            return
        }
        transfer.upstreamProxy = proxy
        transfer.parentProxy = self.parentProxy
        // The scheme in the URL is curl's proxy type (socks5h: the proxy resolves the name).
        _ = handle.set(CURLOPT_PROXY, proxy.description)
        if let credentials = proxy.credentials {
            // Options of their own rather than in the URL, which curl would have to decode and
            // which error texts might quote.
            _ = handle.set(CURLOPT_PROXYUSERNAME, credentials.user)
            _ = handle.set(CURLOPT_PROXYPASSWORD, credentials.password)
        }
        // The proxy's "200 Connection established" is not the origin's head.
        handle.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
    }

    /// What a failed transfer through the proxy means when the proxy is to blame, nil otherwise
    /// (then the origin's failure, as for a direct transfer). Also tells the proxy's health.
    func proxyFailure(_ code: CURLcode, of transfer: UpstreamTransfer, detail: String) -> TaskFailure? {
        guard let proxy = transfer.upstreamProxy, let handle = transfer.handle else { return nil }
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        var connectCode = 0
        _ = afc_easy_getinfo_long(handle.raw, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        let failure: TaskFailure?
        switch code {
        case _ where connectCode == 407:
            failure = .upstreamProxyAuth(
                "upstream proxy \(proxy) refused the credentials (407)"
                    + (proxy.credentials == nil ? "; none are configured" : ""))
        case _ where connectCode != 0 && !(200..<300).contains(connectCode):
            failure = .upstreamProxyRefused("upstream proxy \(proxy) refused the tunnel: \(connectCode)")
        case CURLE_COULDNT_RESOLVE_PROXY:
            failure = .upstreamProxyUnreachable("upstream proxy \(proxy): its name does not resolve: \(text)")
        case CURLE_COULDNT_CONNECT where connectCode == 0, CURLE_OPERATION_TIMEDOUT where !handle.wasConnected:
            failure = .upstreamProxyUnreachable("upstream proxy \(proxy) unreachable: \(text)")
        case CURLE_PROXY:
            failure = .upstreamProxyRefused("upstream proxy \(proxy) refused: \(text)")
        default:
            failure = nil
        }
        if failure?.code == TaskFailure.upstreamProxyUnreachable("").code {
            self.parentProxy.unreachable(proxy, reason: failure!.message)
        } else {
            self.parentProxy.reached(proxy)
        }
        return failure
    }
}

extension UpstreamTransfer {
    /// A final head on a transfer through the proxy: the proxy was reached. A 407 there is the
    /// proxy's own (an origin never sends one, RFC 9110 §15.5.8), so it is the proxy's refusal
    /// of our credentials, not a response for the client: passed on, it would read as a
    /// challenge from afproxy.
    func proxyAnswer(_ head: ProxyResponseHead) -> TaskFailure? {
        guard let proxy = self.upstreamProxy else { return nil }
        self.parentProxy?.reached(proxy)
        guard head.status == 407, proxy.scheme == .http else { return nil }
        return .upstreamProxyAuth(
            "upstream proxy \(proxy) refused the credentials (407)"
                + (proxy.credentials == nil ? "; none are configured" : ""))
    }
}

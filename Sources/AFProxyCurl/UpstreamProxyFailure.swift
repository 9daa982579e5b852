import AFProxyModel
import CCurl

/// What a curl failure through the upstream proxy means when the proxy is to blame, nil otherwise
/// (then the origin's failure, as for a direct transfer). One reading for the session's transfers
/// and the pin probe, so that `afproxyctl pin` names the same fault a proxied request's task does.
enum UpstreamProxyFailure {
    static func classify(
        _ code: CURLcode, of handle: EasyHandle, through proxy: UpstreamProxy, detail: String
    ) -> TaskFailure? {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        var connectCode = 0
        _ = afc_easy_getinfo_long(handle.raw, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        switch code {
        case _ where connectCode == 407:
            return .upstreamProxyAuth(
                "upstream proxy \(proxy) refused the credentials (407)"
                    + (proxy.credentials == nil ? "; none are configured" : ""))
        case _ where connectCode != 0 && !(200..<300).contains(connectCode):
            return .upstreamProxyRefused("upstream proxy \(proxy) refused the tunnel: \(connectCode)")
        case CURLE_COULDNT_RESOLVE_PROXY:
            return .upstreamProxyUnreachable("upstream proxy \(proxy): its name does not resolve: \(text)")
        case CURLE_COULDNT_CONNECT where connectCode == 0, CURLE_OPERATION_TIMEDOUT where !handle.wasConnected:
            return .upstreamProxyUnreachable("upstream proxy \(proxy) unreachable: \(text)")
        case CURLE_PROXY:
            return .upstreamProxyRefused("upstream proxy \(proxy) refused: \(text)")
        default:
            return nil
        }
    }

    /// Points `handle` at `proxy`, or at none: never at `http_proxy` from the daemon's
    /// environment, which would loop through afproxy itself.
    static func configure(_ handle: EasyHandle, proxy: UpstreamProxy?) {
        guard let proxy else {
            _ = handle.set(CURLOPT_PROXY, "")
            return
        }
        // The scheme in the URL is curl's proxy type (socks5h: the proxy resolves the name).
        _ = handle.set(CURLOPT_PROXY, proxy.description)
        if let credentials = proxy.credentials {
            // Options of their own rather than in the URL, which curl would have to decode and
            // which error texts might quote.
            _ = handle.set(CURLOPT_PROXYUSERNAME, credentials.user)
            _ = handle.set(CURLOPT_PROXYPASSWORD, credentials.password)
        }
    }
}

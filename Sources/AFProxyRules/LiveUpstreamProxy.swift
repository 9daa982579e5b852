import AFProxyModel

/// The upstream proxy in force for every upstream connection (curl's transfers and the tunnels),
/// which a reload swaps, and what the last connection to it showed, for `afproxyctl status`.
/// One object shared by the two transports, so that both follow one reload and both report to
/// one health. Any thread; each call is one short lock.
package final class LiveUpstreamProxy: Sendable {
    private struct State {
        var route = UpstreamProxyRoute()
        /// Why the last connection to the proxy failed; nil once one succeeds.
        var unreachable: String?
    }

    private let state = Locked(State())

    package init(_ route: UpstreamProxyRoute = .init()) {
        self.state.withLock { $0.route = route }
    }

    package var route: UpstreamProxyRoute { self.state.withLock { $0.route } }

    /// A reload: new connections follow `route`; connections already open keep their way. A
    /// different proxy starts with a clean health.
    package func update(_ route: UpstreamProxyRoute) {
        self.state.withLock { state in
            if state.route.proxy != route.proxy { state.unreachable = nil }
            state.route = route
        }
    }

    /// The proxy a new connection to `host` goes through, nil for a direct one.
    package func proxy(forHost host: String) -> UpstreamProxy? {
        self.state.withLock { $0.route.proxy(forHost: host) }
    }

    /// A connection to `proxy` was made (whatever the proxy then answered).
    package func reached(_ proxy: UpstreamProxy) {
        self.state.withLock { state in
            if state.route.proxy == proxy { state.unreachable = nil }
        }
    }

    /// A connection to `proxy` failed; `reason` never holds its credentials.
    package func unreachable(_ proxy: UpstreamProxy, reason: String) {
        self.state.withLock { state in
            if state.route.proxy == proxy { state.unreachable = reason }
        }
    }

    /// The configured proxy without credentials and, when the last connection to it failed, why;
    /// nil without a proxy.
    package var status: UpstreamProxyStatus? {
        self.state.withLock { state in
            state.route.proxy.map {
                UpstreamProxyStatus(proxy: "\($0)", reachable: state.unreachable == nil, error: state.unreachable)
            }
        }
    }
}

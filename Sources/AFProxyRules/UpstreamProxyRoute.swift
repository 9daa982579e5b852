import AFProxyModel

/// Which connections go through the upstream proxy (`upstream-proxy`) and which go direct
/// (`upstream-exclude`, the `no_proxy` habit). Decided by afproxy for each transfer and tunnel,
/// not by curl's NOPROXY, so that one rule, tested here, covers curl's transfers and the NIO
/// tunnels alike. Loopback is always direct: the proxy cannot reach this machine's services.
package struct UpstreamProxyRoute: Sendable, Equatable {
    /// Nil: every connection is direct.
    package var proxy: UpstreamProxy?
    /// Hosts reached directly: names, `*.domain`, addresses and ADDRESS/LENGTH (an address
    /// pattern matches a host written as an address; names are not resolved to decide).
    package var exclude: [HostPattern] = []

    package init(proxy: UpstreamProxy? = nil, exclude: [HostPattern] = []) {
        self.proxy = proxy
        self.exclude = exclude
    }

    /// The proxy a connection to `host` goes through, nil for a direct one.
    package func proxy(forHost host: String) -> UpstreamProxy? {
        guard let proxy = self.proxy else { return nil }
        var bare = Substring(host)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        if LoopbackHost.contains(String(bare)) { return nil }
        if let address = IPAddress(bare), address.nonPublicScope == "loopback" { return nil }
        if self.exclude.contains(where: { $0.matches(host: String(bare)) }) { return nil }
        return proxy
    }
}

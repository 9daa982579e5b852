import AFProxyModel

extension SessionManager {
    /// The network as last reported; `unknown` until the first report.
    package var reachability: Reachability { self.network.withLock { $0.reachability } }

    /// The network watcher's report of a change (any thread). What a loss does to the tasks is
    /// `network-loss`: download tasks wait without spending retries, and with `suspend-all`
    /// running proxied tasks are suspended until it returns.
    package func networkChanged(_ reachability: Reachability) {
        self.network.withLock { $0.reachability = reachability }
    }
}

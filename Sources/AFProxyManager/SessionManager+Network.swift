import AFProxyModel

extension SessionManager {
    /// The network as last reported; `unknown` until the first report.
    package var reachability: Reachability { self.network.withLock { $0.reachability } }

    /// The network watcher's report of a change (any thread). What a loss does to the tasks is
    /// `network-loss`: download tasks wait without spending retries (`waiting for network`) and
    /// continue at their offset when it returns; with `suspend-all`, running proxied tasks are
    /// suspended too, and exactly those resumed when it returns. Destinations on this machine are
    /// never affected.
    package func networkChanged(_ reachability: Reachability) {
        let (change, suspendedByNetwork) = self.network.withLock { network in
            let wasDown = network.reachability.status == .unreachable
            network.reachability = reachability
            let isDown = reachability.status == .unreachable
            let change: NetworkLossChange =
                !wasDown && isDown
                ? .lost(under: network.policy) : wasDown && !isDown ? .restored(under: network.policy) : .none
            var released: Set<Int> = []
            if change.resumeProxied || change.releaseDownloads { swap(&released, &network.suspendedByNetwork) }
            return (change, released)
        }
        self.apply(change, released: suspendedByNetwork)
    }

    /// `network-loss` from a reload. While the network is gone the tasks are brought to where the
    /// new policy would have put them (`NetworkLossChange.policy`); otherwise it applies at the
    /// next loss.
    package func updateNetworkLoss(_ policy: NetworkLossPolicy) {
        let (change, suspendedByNetwork) = self.network.withLock { network in
            let change = NetworkLossChange.policy(
                from: network.policy, to: policy, networkDown: network.reachability.status == .unreachable)
            network.policy = policy
            var released: Set<Int> = []
            if change.resumeProxied { swap(&released, &network.suspendedByNetwork) }
            return (change, released)
        }
        self.apply(change, released: suspendedByNetwork)
    }

    /// The policy in force.
    package var networkLoss: NetworkLossPolicy { self.network.withLock { $0.policy } }

    /// Carries out `change` on the live tasks; `released`: the proxied tasks the network suspended.
    private func apply(_ change: NetworkLossChange, released: Set<Int>) {
        guard change != .none else { return }
        if change.holdDownloads { self.downloads.networkLost() }
        if change.releaseDownloads { self.downloads.networkRestored() }
        guard change.suspendProxied || change.resumeProxied else { return }
        let live = self.registry.liveTasks.sorted { $0.id < $1.id }
        for task in live where task.kind != .download {
            if change.suspendProxied {
                guard !Self.isLoopback(task), task.state == .running, (try? task.suspend()) != nil else { continue }
                self.network.withLock { _ = $0.suspendedByNetwork.insert(task.id) }
            } else if change.resumeProxied, released.contains(task.id), task.state == .suspended {
                try? task.resume()
            }
        }
    }

    private static func isLoopback(_ task: any ManagedTask) -> Bool {
        switch task {
        case let http as HTTPTask: LoopbackHost.contains(http.request.host)
        case let stream as StreamTask: LoopbackHost.contains(stream.request.host)
        default: false
        }
    }
}

extension SessionManager.NetworkState {
    /// Whether a download started now must wait for the network.
    var holdsNewDownloads: Bool { self.policy != .ignore && self.reachability.status == .unreachable }
}

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
        let (lost, restored, policy, suspendedByNetwork) = self.network.withLock { network in
            let wasDown = network.reachability.status == .unreachable
            network.reachability = reachability
            let isDown = reachability.status == .unreachable
            var released: Set<Int> = []
            if wasDown && !isDown { swap(&released, &network.suspendedByNetwork) }
            return (!wasDown && isDown, wasDown && !isDown, network.policy, released)
        }
        guard policy != .ignore, lost || restored else { return }
        let live = self.registry.withLock { Array($0.live.values) }.sorted { $0.id < $1.id }
        for task in live {
            if let download = task as? DownloadTask {
                guard !download.isLoopback else { continue }
                if lost { download.networkLost() } else { download.networkRestored() }
            } else if policy == .suspendAll {
                if lost {
                    guard !Self.isLoopback(task), task.state == .running, (try? task.suspend()) != nil else { continue }
                    self.network.withLock { _ = $0.suspendedByNetwork.insert(task.id) }
                } else if suspendedByNetwork.contains(task.id), task.state == .suspended {
                    try? task.resume()
                }
            }
        }
    }

    /// Whether a download started now must wait for the network.
    var networkIsDown: Bool {
        self.network.withLock { $0.policy != .ignore && $0.reachability.status == .unreachable }
    }

    private static func isLoopback(_ task: any ManagedTask) -> Bool {
        switch task {
        case let http as HTTPTask: LoopbackHost.host(ofURL: http.request.url).map(LoopbackHost.contains) ?? false
        case let stream as StreamTask: LoopbackHost.contains(stream.request.host)
        default: false
        }
    }
}

import AFProxyModel
import FoundationEssentials

/// `GET /v1/status`: how the daemon is, in one answer — its version and uptime, the network as
/// the watcher last saw it, and the task counts of `GET /v1/stats` (the same value, not a copy
/// of some of its fields, so the two cannot disagree).
package struct DaemonStatus: Sendable, Codable, Equatable {
    package var version: String
    package var uptimeSeconds: Double
    package var network: Reachability
    package var tasks: SessionStats
    /// The proxy's addresses as bound (`127.0.0.1:3128`; port 0 resolved, sockets from systemd
    /// included): what `afproxyctl env` points a shell at, which the configuration alone cannot say.
    package var listen: [String]
    /// The upstream proxy, nil (absent) without one.
    package var upstreamProxy: UpstreamProxyStatus?
    /// The captures running now (`afproxyctl run`), oldest first.
    package var captures: [CaptureSummary] = []
    /// Record rules and the bodies they kept; nil (absent) while there are neither.
    package var recording: RecordingStatus?

    package init(
        version: String = AFProxyVersion.current, uptimeSeconds: Double, network: Reachability, tasks: SessionStats,
        listen: [String] = [], captures: [CaptureSummary] = []
    ) {
        self.version = version
        self.uptimeSeconds = uptimeSeconds
        self.network = network
        self.tasks = tasks
        self.listen = listen
        self.captures = captures
        self.upstreamProxy = tasks.upstreamProxy
    }
}

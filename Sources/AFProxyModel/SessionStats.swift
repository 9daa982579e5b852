/// The figures of `GET /v1/stats`: live tasks by state and kind, totals served, bytes both ways.
package struct SessionStats: Sendable, Codable, Equatable {
    package var version = AFProxyVersion.current
    package var live = 0
    package var byState: [String: Int] = [:]
    package var byKind: [String: Int] = [:]
    /// Tasks completed since start; how many of them failed, and how many were canceled (by a
    /// person, by their client, by a stopping daemon), which are not failures
    /// (`TaskRecord.isFailure`).
    package var served = 0
    package var failed = 0
    package var canceled = 0
    /// Completed records kept for `list --all`.
    package var history = 0
    package var bytesUp: Int64 = 0
    package var bytesDown: Int64 = 0
    package var uptimeSeconds: Double = 0
    package var openConnections = 0
    /// The network as the daemon last knew it (`GET /v1/status` has it too); nil from a daemon
    /// that does not follow it.
    package var network: Reachability?
    /// The state files that do not hold what is in force, by file name, with the reason (a write
    /// failed, or the file was unreadable at start); nil (absent from the JSON) when all do.
    package var stateFiles: [String: String]?
    /// The upstream proxy (`upstream-proxy`) and whether it was reachable last time; nil (absent
    /// from the JSON) without one.
    package var upstreamProxy: UpstreamProxyStatus?

    package init() {}
}

package enum AFProxyVersion {
    package static let current = "0.1.0"
}

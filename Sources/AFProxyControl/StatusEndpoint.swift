import AFProxyAPI
import AFProxyManager
import AFProxyModel
import NIOHTTP1

/// `GET /v1/status`: version, uptime, the network, the task counts (the body of `/v1/stats`), the
/// proxy's bound addresses, the captures running.
struct StatusEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case status
    }

    let manager: SessionManager
    let extraStats: @Sendable (inout SessionStats) -> Void
    /// The proxy's bound addresses, as the daemon published them.
    let listen: @Sendable () -> [String]
    /// The captures running now, as the daemon published them.
    let captures: @Sendable () -> [CaptureSummary]

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("GET") { return .failure(refusal) }
        return .success(.status)
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        var stats = self.manager.stats()
        self.extraStats(&stats)
        var status = DaemonStatus(
            version: stats.version, uptimeSeconds: stats.uptimeSeconds, network: self.manager.reachability,
            tasks: stats, listen: self.listen(), captures: self.captures())
        let rules = self.manager.rules.records.ruleSet.count
        if let store = self.manager.bodies {
            let usage = store.usage
            if rules > 0 || usage.bodies > 0 {
                status.recording = RecordingStatus(
                    rules: rules, bodies: usage.bodies, bytes: usage.bytes, maxTotal: store.maxTotal)
            }
        }
        return .json(.ok, status)
    }
}

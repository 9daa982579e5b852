import AFProxyAPI
import AFProxyManager
import AFProxyModel
import NIOHTTP1

/// `GET /v1/status`: version, uptime, the network, the task counts (the body of `/v1/stats`).
struct StatusEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case status
    }

    let manager: SessionManager
    let extraStats: @Sendable (inout SessionStats) -> Void

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("GET") { return .failure(refusal) }
        return .success(.status)
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        var stats = self.manager.stats()
        self.extraStats(&stats)
        let status = DaemonStatus(
            version: stats.version, uptimeSeconds: stats.uptimeSeconds, network: self.manager.reachability,
            tasks: stats)
        return .json(.ok, status)
    }
}

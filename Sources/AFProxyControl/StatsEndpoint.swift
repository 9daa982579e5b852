import AFProxyManager
import AFProxyModel
import NIOHTTP1

/// `GET /v1/stats`: the session's totals, with the daemon's own figures added (`extraStats`).
struct StatsEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case stats
    }

    let manager: SessionManager
    let extraStats: @Sendable (inout SessionStats) -> Void

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("GET") { return .failure(refusal) }
        return .success(.stats)
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        var stats = self.manager.stats()
        self.extraStats(&stats)
        return .json(.ok, stats)
    }
}

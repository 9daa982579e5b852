import AFProxyManager
import AFProxyModel
import NIOCore

/// `GET /v1/live`: the connection becomes a feed of snapshots for pages and tables
/// (`LiveFeedHandler`).
struct LiveEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case live
    }

    let manager: SessionManager
    let extraStats: @Sendable (inout SessionStats) -> Void
    let streams: ControlStreams?

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("GET") { return .failure(refusal) }
        return .success(.live)
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        .stream { [manager, extraStats, streams] in
            LiveFeedHandler(manager: manager, extraStats: extraStats, streams: streams)
        }
    }
}

import NIOCore
import NIOHTTP1

/// `GET /metrics`: the Prometheus text the daemon's metrics module renders, outside /v1 where
/// scrapers look for it; 404 when the daemon serves no metrics.
struct MetricsEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case metrics
    }

    let metrics: ControlServer.Metrics?

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        guard request.method == "GET" else { return .failure(.notAllowed(request.method, on: request.path)) }
        return .success(.metrics)
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        guard let metrics = self.metrics else { return .error(.notFound, "metrics are not enabled") }
        return .body(.ok, contentType: metrics.contentType, ByteBuffer(bytes: metrics.exposition()))
    }
}

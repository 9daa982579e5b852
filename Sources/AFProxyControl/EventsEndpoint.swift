import AFProxyManager
import NIOCore

/// `GET /v1/events`: the connection becomes a stream of events (`EventStreamHandler`).
struct EventsEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case events
    }

    let manager: SessionManager
    let streams: ControlStreams?

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("GET") { return .failure(refusal) }
        return .success(.events)
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        .stream { [manager, streams] in EventStreamHandler(manager: manager, streams: streams) }
    }
}

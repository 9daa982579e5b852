import AFProxyAPI
import AFProxyModel
import NIOHTTP1

/// `GET /v1/web`: the web dashboard's address and token; 404 when web-listen is off.
struct WebEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case web
    }

    let web: @Sendable () -> WebAddress?

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("GET") { return .failure(refusal) }
        return .success(.web)
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        guard let web = self.web() else {
            return .error(
                .notFound, "the web dashboard is off: start afproxy with --web 127.0.0.1:PORT (key web-listen)")
        }
        return .json(.ok, web)
    }
}

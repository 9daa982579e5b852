/// Finds the endpoint for a request's path and hands the request to it: nothing else. Endpoints
/// live under `/v1/{resource}`, by the resource's name; a few outside it, by their whole path
/// (`/metrics`, where scrapers look).
struct ControlRouter: Sendable {
    /// A request routed: the endpoint's route (for tests to read), and how to answer it.
    struct Dispatch: Sendable {
        var route: any Sendable
        var blocks: Bool
        var answer: @Sendable (ControlRequest) -> ControlAnswer
    }

    private typealias Entry = @Sendable (ControlRequest) -> Result<Dispatch, RouteRefusal>

    private var resources: [String: Entry] = [:]
    private var paths: [String: Entry] = [:]

    /// `endpoint` answers `/v1/{resource}` and the paths below it.
    mutating func add(_ resource: String, _ endpoint: some ControlEndpoint) {
        self.resources[resource] = Self.entry(endpoint)
    }

    /// `endpoint` answers exactly `path`, outside `/v1`.
    mutating func add(path: String, _ endpoint: some ControlEndpoint) {
        self.paths[path] = Self.entry(endpoint)
    }

    func route(_ request: ControlRequest) -> Result<Dispatch, RouteRefusal> {
        if let entry = self.paths[request.path] { return entry(request) }
        guard let resource = request.rest.first else {
            return .failure(
                RouteRefusal(status: 404, message: "no such endpoint: \(request.path) (the API lives under /v1)"))
        }
        guard let entry = self.resources[resource] else { return .failure(.noSuchEndpoint(request.path)) }
        return entry(request)
    }

    private static func entry<E: ControlEndpoint>(_ endpoint: E) -> Entry {
        { request in
            endpoint.route(request).map { route in
                Dispatch(route: route, blocks: endpoint.blocks(route)) { endpoint.answer(route, to: $0) }
            }
        }
    }
}

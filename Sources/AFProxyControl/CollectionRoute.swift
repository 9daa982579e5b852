/// The routes of a resource that is a list of rules: `GET /v1/NAME` lists them, `POST /v1/NAME`
/// adds one from the body, `DELETE /v1/NAME/{item}` removes one. Hold and intercept rules share
/// it, and every kind under `/v1/rules/{kind}`; `Item` is how the path names one (an id, a host
/// pattern).
enum CollectionRoute<Item: Sendable & Equatable>: Sendable, Equatable {
    case list
    case add
    case remove(Item)

    /// Which of the three `request` is, `item` reading the last path segment; 404 for a longer
    /// path, 405 for another method. The collection is the path's segment `depth` after `/v1`
    /// (1 for `/v1/rules/{kind}`).
    static func of(
        _ request: ControlRequest, depth: Int = 0, item: (String) -> Result<Item, RouteRefusal>
    ) -> Result<CollectionRoute, RouteRefusal> {
        let notAllowed = RouteRefusal.notAllowed(request.method, on: request.path)
        switch (request.rest.count - depth, request.method) {
        case (1, "GET"): return .success(.list)
        case (1, "POST"): return .success(.add)
        case (1, _): return .failure(notAllowed)
        case (2, "DELETE"): return item(request.rest[depth + 1]).map { .remove($0) }
        case (2, _): return .failure(notAllowed)
        default: return .failure(.noSuchEndpoint(request.path))
        }
    }
}

/// A request the API does not take, found while routing it (no such endpoint, a wrong method, a
/// malformed id or query): the status and the message of its `{"error": …}` answer.
struct RouteRefusal: Error, Sendable, Equatable {
    var status: Int
    var message: String

    static func noSuchEndpoint(_ path: String) -> RouteRefusal {
        RouteRefusal(status: 404, message: "no such endpoint: \(path)")
    }

    static func notAllowed(_ method: String, on path: String) -> RouteRefusal {
        RouteRefusal(status: 405, message: "method \(method) not allowed on \(path)")
    }
}

import AFProxyModel

/// The throttle endpoints, parsed with no I/O:
///
///     GET    /v1/throttle                       the rules in force
///     PUT    /v1/throttle/global                body {"down": "1M", "up": "500K"}
///     PUT    /v1/throttle/hosts/{pattern}       (a pattern with a slash, a CIDR, percent-encoded)
///     PUT    /v1/throttle/tasks/{id}
///     DELETE the same three [?direction=down|up]
package enum ThrottleRoute: Sendable, Equatable {
    case list
    case set(ThrottleScope)
    case remove(ThrottleScope, directions: Set<ThrottleDirection>)

    /// `rest`: the path after `/v1`, split at slashes, starting with `throttle`.
    static func parse(
        method: String, path: String, rest: [String], query: [String: String]
    ) -> Result<ThrottleRoute, ControlRoute.Refusal> {
        let notAllowed = ControlRoute.Refusal(status: 405, message: "method \(method) not allowed on \(path)")
        guard rest.count > 1 else {
            return method == "GET" ? .success(.list) : .failure(notAllowed)
        }
        let scope: ThrottleScope
        switch (rest[1], rest.count) {
        case ("global", 2):
            scope = .global
        case ("tasks", 3):
            guard let id = Int(rest[2]), id > 0 else {
                return .failure(
                    .init(status: 400, message: "task id must be a positive integer, not \(rest[2].prefix(32))"))
            }
            scope = .task(id)
        case ("hosts", 3):
            do {
                scope = .host(try HostPattern(PercentDecoding.decode(rest[2])))
            } catch {
                return .failure(.init(status: 400, message: error.message))
            }
        default:
            return .failure(
                .init(
                    status: 404,
                    message:
                        "no such endpoint: \(path) (use /v1/throttle/global, /v1/throttle/hosts/PATTERN or /v1/throttle/tasks/ID)"
                ))
        }
        switch method {
        case "PUT", "POST":
            return .success(.set(scope))
        case "DELETE":
            switch query["direction"] {
            case nil, "both": return .success(.remove(scope, directions: [.down, .up]))
            case "down": return .success(.remove(scope, directions: [.down]))
            case "up": return .success(.remove(scope, directions: [.up]))
            case .some(let other):
                return .failure(
                    .init(status: 400, message: "direction must be down, up or both, not \(other.prefix(20))"))
            }
        default:
            return .failure(notAllowed)
        }
    }
}

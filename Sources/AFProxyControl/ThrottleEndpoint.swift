import AFProxyAPI
import AFProxyManager
import AFProxyModel
import AFProxyRules
import FoundationEssentials
import NIOHTTP1

/// `/v1/throttle`: the throttle rules, changed in the session manager's rule book, which keeps the
/// host and global ones in `throttle.json` and writes it off the event loop itself, as it does
/// `holds.json`: a change is answered on the loop.
///
///     GET    /v1/throttle                       the rules in force
///     PUT    /v1/throttle/global                body {"down": "1M", "up": "500K"}
///     PUT    /v1/throttle/hosts/{pattern}       (a pattern with a slash, a CIDR, percent-encoded)
///     PUT    /v1/throttle/tasks/{id}
///     DELETE the same three [?direction=down|up]
struct ThrottleEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case list
        case set(ThrottleScope)
        case remove(ThrottleScope, directions: Set<ThrottleDirection>)
    }

    let manager: SessionManager

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        let (method, path, rest) = (request.method, request.path, request.rest)
        let notAllowed = RouteRefusal.notAllowed(method, on: path)
        guard rest.count > 1 else {
            return method == "GET" ? .success(.list) : .failure(notAllowed)
        }
        let scope: ThrottleScope
        switch (rest[1], rest.count) {
        case ("global", 2):
            scope = .global
        case ("tasks", 3):
            switch ControlRequest.id(rest[2]) {
            case .success(let id): scope = .task(id)
            case .failure(let refusal): return .failure(refusal)
            }
        case ("hosts", 3):
            do {
                scope = .host(try HostPattern(PercentDecoding.decode(rest[2])))
            } catch {
                return .failure(RouteRefusal(status: 400, message: error.message))
            }
        default:
            return .failure(
                RouteRefusal(
                    status: 404,
                    message:
                        "no such endpoint: \(path) (use /v1/throttle/global, /v1/throttle/hosts/PATTERN or /v1/throttle/tasks/ID)"
                ))
        }
        switch method {
        case "PUT", "POST":
            return .success(.set(scope))
        case "DELETE":
            switch request.query["direction"] {
            case nil, "both": return .success(.remove(scope, directions: [.down, .up]))
            case "down": return .success(.remove(scope, directions: [.down]))
            case "up": return .success(.remove(scope, directions: [.up]))
            case .some(let other):
                return .failure(
                    RouteRefusal(status: 400, message: "direction must be down, up or both, not \(other.prefix(20))"))
            }
        default:
            return .failure(notAllowed)
        }
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        switch route {
        case .list:
            return .json(.ok, ThrottleRuleList(rules: self.manager.rules.throttle.rules.rules))
        case .set(let scope):
            let body: ThrottleSetBody
            do {
                body = try JSONDecoder().decode(ThrottleSetBody.self, from: Data(request.body.readableBytesView))
            } catch {
                return .error(.badRequest, #"expected a JSON object {"down": RATE, "up": RATE}"#)
            }
            guard body.down != nil || body.up != nil else {
                return .error(.badRequest, "give a rate for down, up or both")
            }
            do throws(ByteRateError) {
                let down = try body.down.map { text throws(ByteRateError) in try ByteRate(parsing: text) }
                let up = try body.up.map { text throws(ByteRateError) in try ByteRate(parsing: text) }
                do throws(ManagerError) {
                    return .json(.ok, try self.manager.setThrottle(scope, down: down, up: up))
                } catch {
                    return .refusal(error)
                }
            } catch {
                return .error(.badRequest, error.message)
            }
        case .remove(let scope, let directions):
            guard self.manager.rules.throttle.remove(scope, directions: directions) else {
                return .error(.notFound, "no throttle rule for \(scope)")
            }
            return .json(.ok, ThrottleRuleList(rules: self.manager.rules.throttle.rules.rules))
        }
    }
}

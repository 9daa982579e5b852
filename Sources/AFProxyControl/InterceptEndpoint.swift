import AFProxyAPI
import AFProxyManager
import AFProxyModel
import AFProxyRules
import FoundationEssentials
import NIOHTTP1

/// `/v1/intercept`: the intercept rules (which CONNECTs afproxy terminates with its local CA),
/// the configured ones and those added at runtime, kept in `intercept.json` by the rule book.
///
///     GET    /v1/intercept            the rules, the exclusions and the hosts passed through
///     POST   /v1/intercept            intercept a host pattern (`InterceptRequestBody`)
///     DELETE /v1/intercept/{pattern}  a runtime rule, or the pass-through of a host
///
/// Adding a rule prepares the local CA first (created on first use, which writes its files):
/// that route blocks, and a CA that cannot be made is a 500 naming why, with no rule added.
struct InterceptEndpoint: ControlEndpoint {
    typealias Route = CollectionRoute<String>

    let manager: SessionManager
    /// The local CA, loaded or created before a rule is added; nil: no CA in this daemon (tests).
    let authority: (any LocalAuthority)?

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        Route.of(request) { .success($0) }
    }

    func blocks(_ route: Route) -> Bool { route == .add }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        let rules = self.manager.rules.intercept
        switch route {
        case .list:
            return .json(.ok, InterceptList(rules.ruleSet, now: Date()))
        case .add:
            guard
                let body = try? JSONDecoder().decode(
                    InterceptRequestBody.self, from: Data(request.body.readableBytesView))
            else {
                return .error(.badRequest, #"expected a JSON object {"host": "PATTERN"}"#)
            }
            let pattern: HostPattern
            do throws(HostPatternError) {
                pattern = try HostPattern(body.host)
            } catch {
                return .error(.badRequest, error.message)
            }
            do {
                try self.authority?.prepare()
            } catch let missing as InterceptionNotBuilt {
                return .error(.notImplemented, missing.description)
            } catch {
                return .error(.internalServerError, "the local CA is not usable, so nothing is intercepted: \(error)")
            }
            let added = rules.change { $0.add(pattern) }
            return .json(added ? .created : .ok, InterceptList(rules.ruleSet, now: Date()))
        case .remove(let text):
            let pattern: HostPattern
            do throws(HostPatternError) {
                pattern = try HostPattern(PercentDecoding.decode(text))
            } catch {
                return .error(.badRequest, error.message)
            }
            guard rules.change({ $0.remove(pattern) }) else {
                return .error(
                    .notFound,
                    "no runtime intercept rule or pass-through for \(pattern) (configured rules change in the config file)"
                )
            }
            return .json(.ok, InterceptList(rules.ruleSet, now: Date()))
        }
    }
}

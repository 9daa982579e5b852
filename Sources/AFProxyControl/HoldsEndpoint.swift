import AFProxyAPI
import AFProxyManager
import AFProxyModel
import AFProxyRules
import FoundationEssentials
import NIOHTTP1

/// `/v1/holds`: the hold rules, added and removed at runtime and kept in the state directory by
/// the session manager's `HoldBook` (which writes its file off the event loop itself).
///
///     GET    /v1/holds          the rules in order
///     POST   /v1/holds          a rule from the JSON body (`HoldRequestBody`)
///     DELETE /v1/holds/{id}
struct HoldsEndpoint: ControlEndpoint {
    typealias Route = CollectionRoute<Int>

    let manager: SessionManager

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        Route.of(request) { ControlRequest.id($0, of: "hold rule") }
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        switch route {
        case .list:
            return .json(.ok, HoldList(holds: self.manager.rules.holds.all))
        case .add:
            let body: HoldRequestBody
            do {
                body = try JSONDecoder().decode(HoldRequestBody.self, from: Data(request.body.readableBytesView))
            } catch {
                return .error(
                    .badRequest,
                    #"expected a JSON object {"host": …, "method": …, "url": …, "kind": …, "all": …, "once": …}"#
                )
            }
            do throws(HoldRuleError) {
                let rule = self.manager.rules.holds.add(try body.conditions(), once: body.once ?? false)
                return .json(.created, rule)
            } catch {
                return .error(.badRequest, error.message)
            }
        case .remove(let id):
            guard let rule = self.manager.rules.holds.remove(id: id) else {
                return .error(.notFound, "no hold rule with id \(id)")
            }
            return .json(.ok, rule)
        }
    }
}

import AFProxyAPI
import AFProxyManager

/// `/v1/holds`: the hold rules as the API served them before `/v1/rules/holds`, kept for the
/// clients and `afproxyctl hold` that use it. The same rules through the same code
/// (`EditableRules.answer`); only the list keeps its own envelope (`{"holds": […]}`), and a body's
/// unknown keys are ignored, as they always were.
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
        let holds = self.manager.rules.holds
        guard route != .list else { return .json(.ok, HoldList(holds: holds.all)) }
        return holds.answer(route, to: request)
    }
}

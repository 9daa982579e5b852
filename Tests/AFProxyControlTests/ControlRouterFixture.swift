import AFProxyManager
import AFProxyModel
import AFProxyTestSupport

@testable import AFProxyControl

/// The API's router over a session manager whose session thread never runs: what a request is
/// routed to, or why it is refused, with no connection.
enum ControlRouterFixture {
    static let manager = SessionManager(transport: InMemoryTransport(), historyCapacity: 4)
    static let router = ControlRouter.api(
        manager: manager, extraStats: { _ in }, metrics: nil, web: { nil }, streams: nil)

    static func request(_ method: String, _ target: String) -> ControlRequest {
        ControlRequest(method: method, target: target, caller: .socket(nil))
    }

    /// The route of the endpoint `E` that `method` `target` goes to; nil when it is refused or
    /// goes to another endpoint.
    static func route<E: ControlEndpoint>(_ method: String, _ target: String, to endpoint: E.Type) -> E.Route? {
        guard case .success(let dispatch) = self.router.route(self.request(method, target)) else { return nil }
        return dispatch.route as? E.Route
    }

    static func refusal(_ method: String, _ target: String) -> RouteRefusal? {
        guard case .failure(let refusal) = self.router.route(self.request(method, target)) else { return nil }
        return refusal
    }
}

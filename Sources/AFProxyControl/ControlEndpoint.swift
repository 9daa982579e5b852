/// One resource of the control API. `ControlRouter` hands it the requests for its path; it says
/// which of its requests this is (`route`, with no I/O, so each is tested alone) and what the
/// answer is (`answer`). `ControlHandler` writes the answer, on the connection's event loop or,
/// for a route that `blocks`, after running `answer` on `NIOThreadPool.singleton`.
///
/// A new endpoint: a type conforming here, a line in `ControlRouter.api`, a test.
protocol ControlEndpoint: Sendable {
    associatedtype Route: Sendable

    /// Which request this is, or why the endpoint does not take it.
    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal>

    /// Whether answering waits on a disk or the network (a handshake, a file written and synced):
    /// the answer is then made off the event loop, which serves other connections meanwhile.
    func blocks(_ route: Route) -> Bool

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer
}

extension ControlEndpoint {
    func blocks(_ route: Route) -> Bool { false }
}

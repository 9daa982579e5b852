import AFProxyAPI
import AFProxyManager
import AFProxyModel
import NIOHTTP1

/// `GET /v1/pin?host=H&port=P`: the pin of the key a TLS host presents now. The handshake
/// blocks, so it is answered off the event loop.
struct PinEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case pin(host: String, port: Int)
    }

    let manager: SessionManager

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("GET") { return .failure(refusal) }
        guard let host = request.query["host"].map({ PercentDecoding.decode($0) }), !host.isEmpty,
            host.utf8.count <= 253, host.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x2F && $0 != 0x7F })
        else { return .failure(RouteRefusal(status: 400, message: "GET /v1/pin needs ?host=NAME[&port=N]")) }
        guard let port = Int(request.query["port"] ?? "443"), (1...65535).contains(port) else {
            return .failure(RouteRefusal(status: 400, message: "port must be from 1 to 65535"))
        }
        return .success(.pin(host: host, port: port))
    }

    func blocks(_ route: Route) -> Bool { true }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        switch route {
        case .pin(let host, let port):
            switch self.manager.downloads.probePin(host: host, port: port) {
            case .success(let pin):
                return .json(.ok, PinAnswer(host: host, port: port, pin: pin))
            case .failure(let failure):
                return .error(.badGateway, "\(failure.message) (\(failure.code))")
            }
        }
    }
}

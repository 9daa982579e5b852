import AFProxyAPI
import NIOHTTP1

/// `GET /v1/ca`: the local CA (created on this first use); `POST /v1/ca/regenerate`: a new one.
/// Both may generate a key and write files, so they are answered off the event loop. The
/// answer holds the certificate only: the key never leaves its file.
struct CAEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case show
        case regenerate
    }

    let authority: (any LocalAuthority)?

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        switch request.rest.count {
        case 1:
            if let refusal = request.single("GET") { return .failure(refusal) }
            return .success(.show)
        case 2 where request.rest[1] == "regenerate":
            guard request.method == "POST" else { return .failure(.notAllowed(request.method, on: request.path)) }
            return .success(.regenerate)
        default:
            return .failure(.noSuchEndpoint(request.path))
        }
    }

    func blocks(_ route: Route) -> Bool { true }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        guard let authority = self.authority else {
            return .error(.serviceUnavailable, "this daemon has no local CA")
        }
        do {
            switch route {
            case .show: return .json(.ok, try authority.prepare())
            case .regenerate: return .json(.ok, try authority.regenerate())
            }
        } catch let missing as InterceptionNotBuilt {
            return .error(.notImplemented, missing.description)
        } catch {
            return .error(.internalServerError, "the local CA is unusable: \(error)")
        }
    }
}

import AFProxyManager
import NIOHTTP1

extension ManagerError {
    /// The status the control API answers a refusal of the manager's with: the one place its
    /// refusals meet HTTP.
    var status: HTTPResponseStatus {
        switch self.kind {
        case .notFound: .notFound
        case .conflict: .conflict
        case .invalid: .badRequest
        }
    }
}

extension ControlAnswer {
    /// `{"error": message}` with the refusal's status.
    static func refusal(_ refusal: ManagerError) -> ControlAnswer {
        .error(refusal.status, refusal.message)
    }
}

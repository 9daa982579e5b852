/// Which transport a control request came through, and so who vouched for it: the Unix socket
/// checks the peer's credentials per request; the web port's gate (`WebAccess`) has already
/// checked the token, `Host` and `Origin` before the request reaches the API.
enum ControlCaller: Sendable {
    case socket(PeerCredentials?)
    case web

    /// The `client` a download started this way records.
    var name: String {
        switch self {
        case .socket(let peer): peer.map { "uid \($0.uid)" } ?? "control"
        case .web: "web"
        }
    }
}

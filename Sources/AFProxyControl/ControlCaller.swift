import AFProxyModel

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

    /// Whose rights files are read with for this caller (a map-local rule it adds): the token
    /// names no user, so a web caller's are anyone's; so are a socket caller's whose credentials
    /// could not be read.
    var readRights: ReadRights {
        switch self {
        case .socket(let peer?): peer.readRights()
        case .socket(nil), .web: .anyone
        }
    }
}

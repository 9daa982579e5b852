/// Who may use the web dashboard (`web-listen`), decided from a request's head alone so it is
/// tested without sockets. Three checks, in this order:
///
/// 1. `Host` must name the listening address (or, for a loopback one, `localhost` with its port):
///    a page on another site that rebinds its DNS name to 127.0.0.1 reaches the port, but its
///    requests carry its own name (DNS rebinding). 421, the status for "not this server's name".
/// 2. An `Origin`, when present, must be this dashboard's own: a page elsewhere cannot steer tasks
///    through the person's browser (cross-site requests). 403.
/// 3. The token, from `Authorization: Bearer`, or from the cookie the page got when it was opened
///    with `/?token=…` (`enter`, which also drops the token from the address bar). 401.
///
/// A change (any method but GET and HEAD) authorized by the cookie must also carry `Origin`:
/// browsers send it with every such request, so one without it did not come from the page.
/// The cookie is `HttpOnly` (the page's script never sees the token) and `SameSite=Strict` (no
/// other site's page sends it), and named after the port, as cookies are shared between ports.
package struct WebAccess: Sendable, Equatable {
    package var token: String
    /// `host:port` as `Host` must read it; the first is the listening address itself.
    package var authorities: [String]
    package var port: Int

    package init(token: String, host: String, port: Int) {
        self.token = token
        self.port = port
        var authorities = [EndpointText.of(host: host, port: port).lowercased()]
        if LoopbackHost.contains(host.trimmingBrackets) { authorities.append("localhost:\(port)") }
        // Browsers leave HTTP's default port out of Host and Origin.
        if port == 80 { authorities += authorities.map { String($0.dropLast(3)) } }
        self.authorities = authorities
    }

    package var cookieName: String { "afproxy-token-\(self.port)" }

    /// The dashboard's address without the token.
    package var url: String { "http://\(self.authorities[0])/" }

    /// What a request shows of itself: its method and target, and the header fields that matter.
    package struct Request: Sendable, Equatable {
        package var method: String
        package var target: String
        package var host: String?
        package var origin: String?
        package var cookie: [String]
        package var authorization: String?

        package init(
            method: String, target: String, host: String?, origin: String? = nil, cookie: [String] = [],
            authorization: String? = nil
        ) {
            self.method = method
            self.target = target
            self.host = host
            self.origin = origin
            self.cookie = cookie
            self.authorization = authorization
        }
    }

    package enum Decision: Sendable, Equatable {
        case allow
        /// The page opened with the right `?token=`: set this cookie and send the browser to `location`.
        case enter(setCookie: String, location: String)
        case refuse(status: Int, message: String)
    }

    package func decide(_ request: Request) -> Decision {
        guard let host = request.host?.lowercased(), self.authorities.contains(host) else {
            let named = request.host.map { "Host \($0.prefix(100))" } ?? "no Host"
            return .refuse(
                status: 421, message: "this dashboard answers to Host \(self.authorities[0]) only, not \(named)")
        }
        if let origin = request.origin, !self.authorities.contains(where: { "http://\($0)" == origin.lowercased() }) {
            return .refuse(
                status: 403, message: "requests from another site (Origin \(origin.prefix(100))) are refused")
        }
        let (path, query) = Self.split(request.target)
        if let offered = query, request.method == "GET", path == "/" {
            guard Self.same(offered, self.token) else { return .refuse(status: 401, message: Self.wrongToken) }
            let cookie = "\(self.cookieName)=\(self.token); Path=/; HttpOnly; SameSite=Strict"
            return .enter(setCookie: cookie, location: "/")
        }
        let bearer = request.authorization.flatMap(Self.bearer)
        let cookie = request.cookie.lazy.compactMap { self.cookieValue(in: $0) }.first
        guard let offered = bearer ?? cookie else {
            return .refuse(
                status: 401, message: "the dashboard needs its token: open the address `afproxyctl web` prints")
        }
        guard Self.same(offered, self.token) else { return .refuse(status: 401, message: Self.wrongToken) }
        if bearer == nil && request.origin == nil && request.method != "GET" && request.method != "HEAD" {
            return .refuse(status: 403, message: "a change needs the page's Origin or Authorization: Bearer TOKEN")
        }
        return .allow
    }

    private static let wrongToken = "wrong token: open the address `afproxyctl web` prints"

    /// Compares in time that depends on the lengths only, never on where the first difference is.
    static func same(_ offered: String, _ token: String) -> Bool {
        let a = Array(offered.utf8)
        let b = Array(token.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<b.count {
            difference |= (index < a.count ? a[index] : 0) ^ b[index]
        }
        return difference == 0
    }

    /// The path, and the value of `token=` in the query if it has one.
    private static func split(_ target: String) -> (Substring, String?) {
        guard let mark = target.firstIndex(of: "?") else { return (Substring(target), nil) }
        let query = target[target.index(after: mark)...]
        let token = query.split(separator: "&").first { $0.hasPrefix("token=") }.map { String($0.dropFirst(6)) }
        return (target[..<mark], token)
    }

    private static func bearer(_ value: String) -> String? {
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1])
    }

    /// This dashboard's cookie in one `Cookie` field (`a=1; b=2`).
    private func cookieValue(in field: String) -> String? {
        for pair in field.split(separator: ";") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, kv[0].trimmingSpaces == self.cookieName else { continue }
            return String(kv[1].trimmingSpaces)
        }
        return nil
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: Substring {
        var view = Substring(self)
        while view.first == " " { view = view.dropFirst() }
        while view.last == " " { view = view.dropLast() }
        return view
    }

    fileprivate var trimmingBrackets: String {
        self.hasPrefix("[") && self.hasSuffix("]") ? String(self.dropFirst().dropLast()) : String(self)
    }
}

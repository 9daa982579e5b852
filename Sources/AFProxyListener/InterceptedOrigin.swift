import AFProxyModel
import NIOHTTP1

/// The origin of an intercepted connection: the CONNECT's target, whose TLS afproxy terminated.
/// A request inside names its path in origin form (`GET /a?b`, RFC 9112 §3.2.1), as a client
/// speaks to the origin itself, and goes to `https://host[:port]` with it. A request that names
/// another origin (in absolute form or in `Host`) is refused with 421 rather than sent where the
/// CONNECT did not ask to go: the certificate the client accepted names this host only.
struct InterceptedOrigin: Sendable, Equatable {
    var host: String
    var port: Int

    /// `host[:port]` as a URL and `Host` write it: the port left out when it is 443, an IPv6
    /// address in brackets.
    var authority: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return self.port == 443 ? host : "\(host):\(self.port)"
    }

    func url(for uri: String, host: String?) -> Result<AbsoluteURL, ProxyRefusal> {
        let target: Substring
        if uri.utf8.first == UInt8(ascii: "/") {
            target = Substring(uri)
        } else {
            switch AbsoluteURL.parse(uri, scheme: "https") {
            case .success(let url) where self.names(url.authority[...]):
                target = Substring(url.path)
            case .success(let url):
                return .failure(self.misdirected(url.authority[...]))
            case .failure:
                return .failure(
                    ProxyRefusal(.badRequest, "a request inside an intercepted connection names a path: GET /path"))
            }
        }
        if let host, !self.names(host[...]) { return .failure(self.misdirected(host[...])) }
        var path = target
        if let hash = path.utf8.firstIndex(of: UInt8(ascii: "#")) { path = path[..<hash] }
        guard path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(ProxyRefusal(.badRequest, "the request target holds bytes no URL may hold"))
        }
        let authority = self.authority
        return .success(AbsoluteURL(authority: authority, text: "https://\(authority)\(path)", path: String(path)))
    }

    /// Whether `authority` (`host[:port]`, from a URL or `Host`) is this origin.
    func names(_ authority: Substring) -> Bool {
        var host = authority
        var port = 443
        if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")), authority.utf8.last != UInt8(ascii: "]") {
            guard let number = Int(authority[authority.utf8.index(after: colon)...]) else { return false }
            port = number
            host = authority[..<colon]
        }
        if host.utf8.first == UInt8(ascii: "["), host.utf8.last == UInt8(ascii: "]") {
            host = host.dropFirst().dropLast()
        }
        return port == self.port && host.lowercased() == self.host.lowercased()
    }

    private func misdirected(_ named: Substring) -> ProxyRefusal {
        ProxyRefusal(
            HTTPResponseStatus(statusCode: 421),
            "this connection was opened to \(self.authority), not to \(named.prefix(64))", closeConnection: false)
    }
}

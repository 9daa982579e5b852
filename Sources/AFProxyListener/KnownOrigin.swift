import AFProxyModel
import NIOHTTP1

/// The origin of a connection whose destination afproxy knows before its first request: an
/// intercepted CONNECT's target, whose TLS afproxy terminated, or the destination of a SOCKS5
/// or captured connection that carries plain HTTP (`ArrivalSniffer`). A request inside names
/// its path in origin form (`GET /a?b`, RFC 9112 §3.2.1), as a client speaks to the origin
/// itself, and goes to `scheme://host[:port]` with it.
///
/// A request that names another origin (in absolute form or in `Host`) is refused with 421
/// rather than sent where the client did not ask to go: the certificate an intercepted client
/// accepted names this host only, and a SOCKS5 client named its destination. A captured
/// connection (`followsHost`) is the exception: its destination is an address the program
/// chose from a name, and `Host` says which name, as it says to the origin itself; its
/// absolute-form requests (a program that uses a proxy of its own) go where they name.
struct KnownOrigin: Sendable, Equatable {
    var host: String
    var port: Int
    /// `https`: afproxy terminated the client's TLS; `http`: the client spoke plain HTTP.
    var tls = true
    /// `Host` (or an absolute URL) names the origin; the destination only where neither does.
    var followsHost = false

    var scheme: String { self.tls ? "https" : "http" }

    private var defaultPort: Int { self.tls ? 443 : 80 }

    /// `host[:port]` as a URL and `Host` write it: the port left out when it is the scheme's,
    /// an IPv6 address in brackets.
    var authority: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return self.port == self.defaultPort ? host : "\(host):\(self.port)"
    }

    func url(for uri: String, host: String?) -> Result<AbsoluteURL, ProxyRefusal> {
        if self.followsHost { return self.namedURL(for: uri, host: host) }
        let target: Substring
        if uri.utf8.first == UInt8(ascii: "/") {
            target = Substring(uri)
        } else {
            switch AbsoluteURL.parse(uri, scheme: self.scheme) {
            case .success(let url) where self.names(url.authority[...]):
                target = Substring(url.path)
            case .success(let url):
                return .failure(self.misdirected(url.authority[...]))
            case .failure:
                return .failure(
                    ProxyRefusal(
                        .badRequest, "a request inside a connection to \(self.authority) names a path: GET /path"))
            }
        }
        if let host, !self.names(host[...]) { return .failure(self.misdirected(host[...])) }
        var path = target
        if let hash = path.utf8.firstIndex(of: UInt8(ascii: "#")) { path = path[..<hash] }
        guard path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(ProxyRefusal(.badRequest, "the request target holds bytes no URL may hold"))
        }
        let authority = self.authority
        return .success(
            AbsoluteURL(authority: authority, text: "\(self.scheme)://\(authority)\(path)", path: String(path)))
    }

    /// A captured connection's URL: an absolute one as it is, else `Host` (or the destination)
    /// with the path, checked as a proxied URL is.
    private func namedURL(for uri: String, host: String?) -> Result<AbsoluteURL, ProxyRefusal> {
        guard uri.utf8.first == UInt8(ascii: "/") else { return AbsoluteURL.parse(uri, scheme: self.scheme) }
        let authority = host.flatMap { $0.isEmpty ? nil : $0 } ?? self.authority
        return AbsoluteURL.parse("\(self.scheme)://\(authority)\(uri)", scheme: self.scheme)
    }

    /// Whether `authority` (`host[:port]`, from a URL or `Host`) is this origin.
    func names(_ authority: Substring) -> Bool {
        var host = authority
        var port = self.defaultPort
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

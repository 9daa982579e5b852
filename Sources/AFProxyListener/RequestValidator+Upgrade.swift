import AFProxyModel
import NIOHTTP1

/// A WebSocket handshake (RFC 6455 §4.1): a GET asking to upgrade to `websocket`. It becomes a
/// stream task that sends the request to the origin and relays both ways after the origin's
/// answer, instead of an HTTP task, which would drop `Upgrade` as hop-by-hop. Other upgrades
/// (h2c, TLS) are declined as before: the origin then answers in HTTP/1.1.
extension RequestValidator {
    /// Whether `head` is a handshake this proxy relays: an HTTP/1.1 GET with `Upgrade: websocket`
    /// and the `upgrade` token in `Connection`.
    package static func asksForWebSocket(_ head: HTTPRequestHead) -> Bool {
        head.method == .GET && head.version == .http1_1
            && head.headers["upgrade"].contains { value in
                value.split(separator: ",").contains { $0.trimmingSpaces().lowercased() == "websocket" }
            }
            && head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
    }

    /// The handshake's tunnel: the same checks as any request (URL, framing, loops, proxy
    /// authentication; inside an intercepted, SOCKS5 or captured connection, its origin), and no body. A refusal
    /// closes the connection: the parser stopped at the request's end, so nothing after it
    /// could be read as HTTP.
    package func validateUpgrade(_ head: HTTPRequestHead, client: String) -> Result<StreamRequest, ProxyRefusal> {
        let request: ProxyRequest
        switch self.validate(head, client: client) {
        case .success(let validated): request = validated
        case .failure(var refusal):
            refusal.closeConnection = true
            return .failure(refusal)
        }
        guard request.body == .none || request.body == .length(0) else {
            return .failure(ProxyRefusal(.badRequest, "a WebSocket handshake carries no body", closeConnection: true))
        }
        let origin: ConnectTarget
        let path: String
        let tls = self.knownOrigin?.tls ?? false
        if let known = self.knownOrigin, !known.followsHost {
            origin = ConnectTarget(host: known.host, port: known.port)
            path = String(request.url.dropFirst("\(known.scheme)://\(known.authority)".utf8.count))
        } else {
            guard case .success(let url) = AbsoluteURL.parse(request.url, scheme: tls ? "https" : "http"),
                let target = Self.target(of: url.authority, defaultPort: tls ? 443 : 80)
            else {
                return .failure(ProxyRefusal(.badRequest, "the URL names no valid host", closeConnection: true))
            }
            origin = target
            path = url.path
        }
        var lines = "\(head.method.rawValue) \(path) HTTP/1.1\r\n"
        for field in request.headers { lines += "\(field.name): \(field.value)\r\n" }
        lines += "Upgrade: \(head.headers["upgrade"].joined(separator: ", "))\r\nConnection: Upgrade\r\n\r\n"
        let schemeLength = tls ? "https".utf8.count : "http".utf8.count
        let url = (tls ? "wss" : "ws") + request.url.dropFirst(schemeLength)
        var stream = StreamRequest(
            host: origin.host, port: origin.port, headers: request.headers, client: client, proxyUser: request.proxyUser
        )
        stream.upgrade = StreamUpgrade(url: url, method: head.method.rawValue, head: lines, tls: tls)
        return .success(stream)
    }

    /// `host[:port]` of a URL as host and port, the scheme's port when it names none.
    private static func target(of authority: String, defaultPort: Int) -> ConnectTarget? {
        if case .success(let target) = ConnectTarget.parse(authority) { return target }
        if case .success(let target) = ConnectTarget.parse(authority + ":\(defaultPort)") { return target }
        return nil
    }
}

import NIOHTTP1

/// A request the proxy answers itself, with a status and a short text saying why. Built by
/// validation and by upstream failures; written by the connection handler.
public struct ProxyRefusal: Error, Sendable, Equatable {
    public var status: HTTPResponseStatus
    public var message: String
    /// The connection cannot be trusted afterwards (framing in doubt): close it.
    public var closeConnection: Bool

    public init(_ status: HTTPResponseStatus, _ message: String, closeConnection: Bool = true) {
        self.status = status
        self.message = message
        self.closeConnection = closeConnection
    }

    /// The response head and body. `Content-Length` frames it even for HTTP/1.0 clients.
    func response(version: HTTPVersion, via: String) -> (HTTPResponseHead, String) {
        let body = "\(self.status.code) \(self.status.reasonPhrase): \(self.message)\n"
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Via", value: "\(version.major).\(version.minor) \(via)")
        headers.add(name: "Connection", value: self.closeConnection ? "close" : "keep-alive")
        return (HTTPResponseHead(version: version, status: self.status, headers: headers), body)
    }
}

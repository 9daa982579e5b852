import AFProxyModel
import NIOCore
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
        headers.add(name: "Date", value: HTTPDate.now())
        headers.add(name: "Via", value: "\(version.major).\(version.minor) \(via)")
        headers.add(name: "Connection", value: self.closeConnection ? "close" : "keep-alive")
        return (HTTPResponseHead(version: version, status: self.status, headers: headers), body)
    }

    /// The same answer as raw bytes, for a connection that no longer has an HTTP encoder: a CONNECT
    /// is answered after its HTTP handlers left the pipeline (NIO's encoder would drop the body of
    /// any answer to a CONNECT, and its Content-Length with it).
    func bytes(version: HTTPVersion, via: String) -> ByteBuffer {
        let (head, body) = self.response(version: version, via: via)
        var text = "HTTP/\(version.major).\(version.minor) \(head.status.code) \(head.status.reasonPhrase)\r\n"
        for (name, value) in head.headers { text += "\(name): \(value)\r\n" }
        return ByteBuffer(string: text + "\r\n" + body)
    }
}

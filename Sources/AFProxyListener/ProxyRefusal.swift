import AFProxyModel
import AFProxyServerKit
import NIOCore
import NIOHTTP1

/// A request the proxy answers itself, with a status and a short text saying why. Built by
/// validation and by upstream failures; written by the connection handler.
package struct ProxyRefusal: Error, Sendable, Equatable {
    package var status: HTTPResponseStatus
    package var message: String
    /// The connection cannot be trusted afterwards (framing in doubt): close it.
    package var closeConnection: Bool
    /// Seconds after which a client may try again (`Retry-After`), for a refusal that only says
    /// "not now" (503 over the connection limit).
    package var retryAfter: Int?
    /// A 407: the answer carries `Proxy-Authenticate: Basic realm="afproxy"`.
    package var challenge = false

    package init(_ status: HTTPResponseStatus, _ message: String, closeConnection: Bool = true, retryAfter: Int? = nil)
    {
        self.status = status
        self.message = message
        self.closeConnection = closeConnection
        self.retryAfter = retryAfter
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
        if let seconds = self.retryAfter { headers.add(name: "Retry-After", value: String(seconds)) }
        if self.challenge { headers.add(name: "Proxy-Authenticate", value: ProxyAuthGate.challenge) }
        return (HTTPResponseHead(version: version, status: self.status, headers: headers), body)
    }

    /// The same answer as raw bytes, for a connection that has no HTTP encoder (yet or any more):
    /// a CONNECT is answered after its HTTP handlers left the pipeline (NIO's encoder would drop
    /// the body of any answer to a CONNECT, and its Content-Length with it); the 408 of a head that
    /// never arrived is written on raw bytes, in front of the decoder; and the 503 over the
    /// connection limit before any handler was added.
    func bytes(version: HTTPVersion, via: String) -> ByteBuffer {
        let (head, body) = self.response(version: version, via: via)
        return RefusalWriter.bytes(head: head, body: ByteBuffer(string: body))
    }
}

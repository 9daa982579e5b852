/// A request as the proxy forwards it upstream: already validated, hop-by-hop fields removed,
/// `Via` added. Built by the listener, carried by the task, sent by the upstream session.
package struct ProxyRequest: Sendable {
    /// How the request body is framed, which decides the task's kind and curl's upload mode.
    package enum Body: Sendable, Equatable {
        case none
        case length(Int64)
        /// Chunked, or any body whose length is known only at its end.
        case streamed
    }

    package var method: String
    /// Absolute URL, `http://host[:port]/path?query`; `https://` for a request read inside an
    /// intercepted CONNECT.
    package var url: String {
        didSet { self.host = LoopbackHost.host(ofURL: self.url) ?? "" }
    }
    /// The URL's host, without brackets or port (empty when it names none), read once here:
    /// the throttle, hold and parent-proxy rules and the task's record ask for it several times
    /// a request, and reading it each time was 3-5 % of a proxied request's CPU.
    package private(set) var host: String
    /// Fields to send upstream, in the client's order. Framing fields (Content-Length,
    /// Transfer-Encoding, Expect) are not in the list: the session sets them from `body`.
    package var headers: HTTPHeaderList
    package var body: Body
    /// `host:port` of the client, for the task's record.
    package var client: String
    /// The `proxy-auth-file` user the request authenticated as, for the task's record.
    package var proxyUser: String?
    /// Where the lookup of the client's process puts what it finds (nil: not looked up).
    package var process: ClientProcessSlot?
    /// The stream task of the intercepted CONNECT the request came in, whose TLS afproxy
    /// terminated: the request goes to its origin over TLS, verified. Nil for a proxied request.
    package var parent: Int?
    /// The task a replay sends again: no client connection made it, the daemon did.
    package var replayOf: Int?
    /// The HTTP version the client spoke to afproxy ("1.0", "1.1", "2"); nil for a request no
    /// client sent (a replay, a download).
    package var clientHTTPVersion: String?

    package init(
        method: String, url: String, headers: HTTPHeaderList, body: Body, client: String, proxyUser: String? = nil,
        process: ClientProcessSlot? = nil
    ) {
        self.method = method
        self.url = url
        self.host = LoopbackHost.host(ofURL: url) ?? ""
        self.headers = headers
        self.body = body
        self.client = client
        self.proxyUser = proxyUser
        self.process = process
    }

    package var kind: TaskKind {
        self.body == .none || self.body == .length(0) ? .data : .upload
    }

    /// Read inside an intercepted connection: sent upstream over verified TLS.
    package var isIntercepted: Bool { self.parent != nil }

    /// A response to HEAD has no body whatever its headers say (RFC 9110 §9.3.2).
    package var isHead: Bool { self.method == "HEAD" }
}

/// A `CONNECT host:port` as the proxy opens it: the target already parsed and its port allowed;
/// or a protocol upgrade (`upgrade`), which opens a tunnel to the request's origin too.
/// Built by the listener, carried by the stream task, connected by the session's tunnel layer.
package struct StreamRequest: Sendable, Equatable {
    /// A name, an IPv4 address or an IPv6 address (without its brackets).
    package var host: String
    package var port: Int
    /// The CONNECT request's fields as received, hop-by-hop fields (and with them
    /// Proxy-Authorization) removed: nothing is sent upstream at the HTTP level, so these are
    /// only for the task's record.
    package var headers: HTTPHeaderList
    /// `host:port` of the client, for the task's record.
    package var client: String
    /// The `proxy-auth-file` user the CONNECT authenticated as, for the task's record.
    package var proxyUser: String?
    /// Where the lookup of the client's process puts what it finds (nil: not looked up).
    package var process: ClientProcessSlot?
    /// afproxy terminates the client's TLS (an intercept rule matched): no upstream connection
    /// is opened for the CONNECT itself; each request inside becomes a task of its own.
    package var intercepted = false
    /// A WebSocket handshake to send upstream first; nil for a CONNECT.
    package var upgrade: StreamUpgrade?
    /// The stream task of the intercepted connection an upgrade request came in (`wss://`).
    package var parent: Int?

    package init(
        host: String, port: Int, headers: HTTPHeaderList = [], client: String, proxyUser: String? = nil,
        process: ClientProcessSlot? = nil
    ) {
        self.host = host
        self.port = port
        self.headers = headers
        self.client = client
        self.proxyUser = proxyUser
        self.process = process
    }

    /// `host:port` as the CONNECT line names it, an IPv6 address in brackets.
    package var authority: String {
        self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
    }

    /// What the task's record names: the CONNECT's authority, or the upgrade's `ws://` URL.
    package var url: String { self.upgrade?.url ?? self.authority }

    /// `CONNECT`, or the upgrade request's method.
    package var method: String { self.upgrade?.method ?? "CONNECT" }
}

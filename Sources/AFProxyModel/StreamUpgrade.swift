/// A request that asks its origin to switch protocols (a WebSocket handshake, RFC 6455 §4.1),
/// carried as a stream task rather than an HTTP one: after a 101 the connection is no longer
/// HTTP, and curl would have to hand its socket over. The proxy opens the origin connection,
/// sends `head` as the tunnel's first bytes and relays the origin's answer as it comes; from a
/// 101 on, both sides speak the new protocol through the relay, byte for byte.
package struct StreamUpgrade: Sendable, Equatable {
    /// `ws://host[:port]/path` or `wss://…`: the task's URL.
    package var url: String
    package var method: String
    /// The request head as it goes upstream, in origin form, hop-by-hop fields removed but for
    /// `Upgrade` and `Connection: Upgrade`, `Via` added, ending with its empty line.
    package var head: String
    /// The origin is reached over TLS, verified as an intercepted request's is (`wss://`).
    package var tls: Bool

    package init(url: String, method: String, head: String, tls: Bool) {
        self.url = url
        self.method = method
        self.head = head
        self.tls = tls
    }
}

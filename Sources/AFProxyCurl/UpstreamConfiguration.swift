/// The knobs of the upstream session.
package struct UpstreamConfiguration: Sendable, Equatable {
    /// Time to establish the TCP connection to the origin (curl's CONNECTTIMEOUT): 504 past it.
    package var connectTimeout: Duration
    /// Time without a byte from or to the origin while the transfer is running and waiting on it:
    /// 504 before the response head, a truncated response after. Never applies to a suspended
    /// transfer or one waiting on a slow client.
    package var idleTimeout: Duration
    /// curl's receive buffer (CURLOPT_BUFFERSIZE), allocated per transfer and fixed for its
    /// life: libcurl 7.88 refuses to resize it once the transfer started, so it cannot grow for a
    /// fast client the way the receive window does. 16 KiB (curl's own default) is what a client
    /// that reads slowly can afford: on a long download a larger buffer saves the session thread
    /// little CPU, and a smaller one costs it noticeably more.
    package var receiveBufferSize: Int
    /// curl's upload buffer: larger means fewer read callbacks per MiB sent.
    package var uploadBufferSize: Int
    /// Idle upstream connections kept open for reuse (curl's connection cache,
    /// CURLMOPT_MAXCONNECTS). curl's default is four per easy handle in the multi handle at
    /// the moment a connection goes idle; since a handle leaves the multi handle when its
    /// request ends, that limit sank with every lull, and requests that could have reused a
    /// connection opened a new one (socket, connect, getsockname: extra syscalls each time).
    package var idleConnections: Int
    /// A CONNECT tunnel silent both ways this long is closed; nil: never. (Tunnels are the
    /// session layer's upstream connections too; see `TunnelIdleTimer`.)
    package var tunnelIdleTimeout: Duration?
    /// Whether CONNECT tunnels' bytes may move by splice(2) (`tunnel-splice`); no: every tunnel
    /// takes the NIO relay, as where splice is not possible.
    package var tunnelSplice: Bool

    package init(
        connectTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(120),
        receiveBufferSize: Int = 16 << 10, uploadBufferSize: Int = 256 * 1024, idleConnections: Int = 256,
        tunnelIdleTimeout: Duration? = .seconds(900), tunnelSplice: Bool = true
    ) {
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.receiveBufferSize = receiveBufferSize
        self.uploadBufferSize = uploadBufferSize
        self.idleConnections = idleConnections
        self.tunnelIdleTimeout = tunnelIdleTimeout
        self.tunnelSplice = tunnelSplice
    }
}

import AFProxyModel

/// The client-side limits of the proxy listener. Who may use the proxy (`allow-clients`,
/// `proxy-auth-file`) is the rule book's access kind.
package struct ListenerConfiguration: Sendable, Equatable {
    /// Open client connections at most; the next one gets 503 and is closed.
    package var maxConnections: Int
    /// Largest request header section (all field names and values); over it, 431. At most 80 KiB,
    /// the ceiling of NIO's parser.
    package var maxHeaderBytes: Int
    /// A keep-alive connection with no request started is closed after this long.
    package var idleTimeout: Duration
    /// A request head must arrive in full within this long of its first byte (slow clients): 408.
    package var headerTimeout: Duration
    /// A client silent this long in the middle of its request body gets 408 (or, once its
    /// response started, its connection closed); its task fails with `client-timeout`.
    package var bodyTimeout: Duration
    /// Added to `Via` on both directions, and recognised in incoming `Via` as a loop.
    package var viaName: String
    /// The ports a CONNECT may reach; another gets 403.
    package var allowedConnectPorts: ConnectPortPolicy

    package init(
        maxConnections: Int = 4096, maxHeaderBytes: Int = 64 * 1024, idleTimeout: Duration = .seconds(120),
        headerTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(60), viaName: String = "afproxy",
        allowedConnectPorts: ConnectPortPolicy = .default
    ) {
        self.maxConnections = maxConnections
        self.maxHeaderBytes = maxHeaderBytes
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.viaName = viaName
        self.allowedConnectPorts = allowedConnectPorts
    }

    package static let headerBytesCeiling = 80 * 1024
}

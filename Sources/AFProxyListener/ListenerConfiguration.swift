import AFProxyModel
import AFProxyRules

/// The client-side limits of the proxy listener.
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
    /// Added to `Via` on both directions, and recognised in incoming `Via` as a loop.
    package var viaName: String
    /// The ports a CONNECT may reach; another gets 403.
    package var allowedConnectPorts: ConnectPortPolicy
    /// Who may connect at all (`allow-clients`); another peer gets 403 before a byte is read.
    package var allowedClients: AllowedClients
    /// `proxy-auth-file`'s users; nil: no proxy authentication.
    package var proxyUsers: ProxyUsers?

    package init(
        maxConnections: Int = 4096, maxHeaderBytes: Int = 64 * 1024, idleTimeout: Duration = .seconds(120),
        headerTimeout: Duration = .seconds(30), viaName: String = "afproxy",
        allowedConnectPorts: ConnectPortPolicy = .default, allowedClients: AllowedClients = .loopback,
        proxyUsers: ProxyUsers? = nil
    ) {
        self.maxConnections = maxConnections
        self.maxHeaderBytes = maxHeaderBytes
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.viaName = viaName
        self.allowedConnectPorts = allowedConnectPorts
        self.allowedClients = allowedClients
        self.proxyUsers = proxyUsers
    }

    package static let headerBytesCeiling = 80 * 1024
}

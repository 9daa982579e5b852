import AFProxyModel
import NIOCore

extension SocketAddress {
    /// The address as logs, task records and the listen lines show it: `127.0.0.1:3128`,
    /// `[::1]:3128` (`EndpointText`), a Unix socket's path, or `unix` for an unnamed one (a
    /// client's end). One place for the listeners, the daemon and the tunnels' upstream ends.
    package var endpointText: String {
        switch self {
        case .unixDomainSocket: self.pathname.flatMap { $0.isEmpty ? nil : $0 } ?? "unix"
        default: EndpointText.of(host: self.ipAddress ?? "?", port: self.port ?? 0)
        }
    }
}

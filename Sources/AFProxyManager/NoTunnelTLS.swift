import AFProxyModel
import AFProxyTunnel
import NIOCore

/// A session made without a TLS client for tunnels (tests): a `wss://` upgrade fails, clearly.
struct NoTunnelTLS: TunnelTLSMaker {
    struct Unavailable: Error {}

    func clientHandlers(for tls: TunnelTLS) throws -> [any ChannelHandler] {
        throw Unavailable()
    }

    func failure(for error: any Error, host: String) -> TaskFailure {
        .tlsFailure("this session has no TLS client for tunnels")
    }
}

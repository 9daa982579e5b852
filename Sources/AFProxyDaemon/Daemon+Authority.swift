#if Interception
import AFProxyControl
import AFProxyListener
import AFProxyManager
import AFProxyModel
import AFProxyRules
import AFProxyTLS
import AFProxyTunnel
import Logging
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

extension Daemon {
    /// What `--version` adds: nothing, this is the whole daemon.
    static let buildNote = ""

    /// The origin side of `wss://` upgrades inside intercepted connections.
    static var tunnelTLS: (any TunnelTLSMaker)? { OriginTLS() }

    /// The local CA and what the listener intercepts with it. Intercept rules in force at start
    /// (configured, or kept from the last run) have the CA made now, before the first CONNECT,
    /// so that no event loop ever writes its files.
    static func interception(
        _ rules: LiveRules<InterceptRuleSet>, _ configuration: DaemonConfiguration, _ environment: [String: String],
        logger: Logger
    ) -> (any LocalAuthority, Interception?) {
        let authority = Self.interceptAuthority(configuration, environment, logger: logger)
        if rules.isActive { Self.prepareForInterception(authority, logger: logger) }
        return (authority, Interception(rules: rules, certificates: authority))
    }

    /// The local CA (`ca-dir`, default STATE/ca). Loaded now when its key is there, so a key that
    /// cannot be used is reported at start; made only on first use otherwise (`afproxyctl ca`, or
    /// interception), so a daemon that never intercepts writes no key. A CA that fails to load
    /// does not stop the daemon: tunnels and plain HTTP need none, and `afproxyctl ca` answers why.
    private static func interceptAuthority(
        _ configuration: DaemonConfiguration, _ environment: [String: String], logger: Logger
    ) -> InterceptAuthority {
        let directory =
            configuration.caDirectory
            ?? (configuration.stateDirectory ?? DownloadLocations.stateDirectory(environment)) + "/ca"
        let authority = InterceptAuthority(directory: directory, logger: logger)
        guard access(directory + "/ca-key.pem", F_OK) == 0 || access(directory + "/ca-cert.pem", F_OK) == 0 else {
            return authority
        }
        do {
            try authority.prepare()
        } catch {
            logger.error("the local CA cannot be used, HTTPS interception is off: \(error)")
        }
        return authority
    }

    /// A CA that cannot be made leaves every CONNECT a plain tunnel, which the log says.
    private static func prepareForInterception(_ authority: InterceptAuthority, logger: Logger) {
        do {
            try authority.prepare()
        } catch {
            logger.error("intercept rules are set but the local CA cannot be used, so nothing is intercepted: \(error)")
        }
    }
}

/// The listener's view of the CA: ready once loaded, and a TLS server side per intercepted
/// connection. A leaf that cannot be minted (not seen: the key is in memory) ends that one
/// connection, its stream task saying why.
extension InterceptAuthority: InterceptCertificates {
    package var isReady: Bool { self.tls != nil }

    package func makeServerHandler(connectHost: String, rsa: Bool) -> (any ChannelHandler)? {
        try? self.tls?.makeServerHandler(connectHost: connectHost, kind: rsa ? .rsa : .ecdsa)
    }

    /// The RSA key is generated on NIO's thread pool, never on an event loop.
    package func prepareRSA(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        guard let tls = self.tls else { return eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        if tls.isReady(for: .rsa) { return eventLoop.makeSucceededVoidFuture() }
        return NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) { try tls.prepare(.rsa) }
    }
}

/// The tunnels' view of the TLS client: a `wss://` upgrade's origin verified with swift-nio-ssl,
/// as an intercepted request's is by curl.
extension OriginTLS: TunnelTLSMaker {
    package func clientHandlers(for tls: TunnelTLS) throws -> [any ChannelHandler] {
        try self.handlers(host: tls.host, caFile: tls.caFile, pins: tls.pins, pinsStandalone: tls.pinsStandalone)
    }

    package func failure(for error: any Error, host: String) -> TaskFailure {
        Self.failure(for: error, host: host)
    }
}

/// The control API's view of the CA.
extension InterceptAuthority: LocalAuthority {}
#endif

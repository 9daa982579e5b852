import AFProxyControl
import AFProxyCurl
import AFProxyListener
import AFProxyManager
import AFProxyModel
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Wires the parts together for one run: the upstream session thread, the session manager, the
/// proxy listener and the control server, run as a service group until SIGTERM or SIGINT.
struct Daemon {
    let configuration: DaemonConfiguration
    let environment: [String: String]

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        Self.raiseFileLimit()
        var logger = Logger(label: "afproxy")
        logger.logLevel = Logger.Level(rawValue: self.configuration.logLevel) ?? .info

        // The session thread takes a core of its own: by default the event loops get the rest.
        let threads = self.configuration.threads > 0 ? self.configuration.threads : max(1, System.coreCount - 1)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let session = UpstreamSession(configuration: UpstreamConfiguration(
            connectTimeout: .seconds(self.configuration.connectTimeout),
            idleTimeout: .seconds(self.configuration.upstreamTimeout)))
        session.run()
        let manager = SessionManager(session: session, historyCapacity: self.configuration.historySize)

        let listener = ProxyListener(
            manager: manager,
            configuration: ListenerConfiguration(
                maxConnections: self.configuration.maxConnections,
                maxHeaderBytes: self.configuration.maxHeaderBytes,
                idleTimeout: .seconds(self.configuration.idleTimeout),
                headerTimeout: .seconds(self.configuration.headerTimeout),
                viaName: "afproxy"),
            group: group, logger: logger)
        let control = ControlServer(manager: manager, group: group, logger: logger) { stats in
            stats.openConnections = listener.openConnections
        }

        do {
            for text in self.configuration.listen {
                let address = try ListenAddress.parse(text)
                let bound = try await listener.bind(host: address.host, port: address.port)
                logger.notice("listening on \(Self.describe(bound))")
            }
            let path = ControlSocketPath.resolve(
                flag: self.configuration.controlSocket, environment: self.environment, uid: getuid())
            let underSystemd = self.environment["INVOCATION_ID"] != nil || self.environment["RUNTIME_DIRECTORY"] != nil
            try await control.bind(path: path, mode: underSystemd ? 0o660 : 0o600)
            logger.notice("control socket at \(path)")
        } catch {
            await listener.stopAccepting()
            await control.stop()
            session.shutdown()
            try? await group.shutdownGracefully()
            throw error
        }

        let services = ServiceGroup(
            configuration: .init(
                services: [.init(service: listener), .init(service: control)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await services.run()
        session.shutdown()
        try await group.shutdownGracefully()
        logger.notice("stopped")
    }

    static func describe(_ address: SocketAddress) -> String {
        switch address {
        case .v6: "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        default: "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        }
    }

    /// Each client connection and each upstream connection is a descriptor: take the hard limit.
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(RLIMIT_NOFILE_VALUE, &limit)
    }
}

#if os(Linux)
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#endif

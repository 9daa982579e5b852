import AFProxyControl
import AFProxyCurl
import AFProxyListener
import AFProxyManager
import AFProxyMetrics
import AFProxyModel
import AFProxyNetwork
import AFProxyRules
import AFProxyStore
import AFProxySystemd
import AFProxyTransport
import AFProxyWeb
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Wires the parts together for one run: the upstream session thread, the session manager and
/// the four servers (the proxy listener, the control socket, the dashboard and the metrics port),
/// all services of one group with `DaemonService` (start, reload on SIGHUP); the group's order is
/// the one stop sequence on SIGTERM or SIGINT (`stopSequence`).
struct Daemon {
    let configuration: DaemonConfiguration
    let environment: [String: String]
    /// Reads the configuration again from the same sources, for SIGHUP.
    let reload: @Sendable () throws(ConfigurationError) -> DaemonConfiguration

    /// Serves until stopped, then shuts the I/O executor down last, on every way out (a start
    /// that fails included): every writer has flushed by then.
    func run() async throws {
        do {
            try await self.serve()
        } catch {
            await IOExecutor.shared.shutdown()
            throw error
        }
        await IOExecutor.shared.shutdown()
    }

    private func serve() async throws {
        signal(SIGPIPE, SIG_IGN)
        // A download over the file size limit (RLIMIT_FSIZE) then fails its write with EFBIG,
        // a task failure, instead of killing the daemon.
        signal(SIGXFSZ, SIG_IGN)
        ProcessHeap.configure()
        Self.raiseFileLimit()
        let logging = DaemonLogging(configuration: self.configuration, environment: self.environment)
        let logger = logging.logger()
        try Self.checkExposure(self.configuration)
        let listenerConfiguration = Self.listenerConfiguration(self.configuration)
        let configuredRules = try Self.configuredRules(self.configuration, logger: logger)

        // One event loop per core, each paired with a curl session of its own (`UpstreamSessions`).
        let threads = self.configuration.threads > 0 ? self.configuration.threads : System.coreCount
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let rules = RuleBook(
            configured: configuredRules,
            stateDirectory: self.configuration.stateDirectory ?? DownloadLocations.stateDirectory(self.environment),
            logger: logger)
        let session = UpstreamSessions(
            affinities: group.makeIterator().map(SessionAffinity.init),
            configuration: UpstreamConfiguration(
                connectTimeout: .seconds(self.configuration.connectTimeout),
                idleTimeout: .seconds(self.configuration.upstreamTimeout),
                tunnelIdleTimeout: self.configuration.tunnelIdleTimeout > 0
                    ? .seconds(self.configuration.tunnelIdleTimeout) : nil,
                tunnelSplice: self.configuration.tunnelSplice),
            liveUpstreamProxy: rules.liveUpstreamProxy)
        if let proxy = self.configuration.upstream.proxy { logger.notice("upstream proxy: \(proxy)") }
        session.run()
        let manager = SessionManager(
            transport: session, historyCapacity: self.configuration.historySize,
            bufferBudget: self.configuration.bufferBudget, recordMaxTotal: Int64(self.configuration.recordMaxTotal),
            downloads: Self.downloadSettings(self.configuration, self.environment),
            transparentResumeLimit: self.configuration.transparentResume ? self.configuration.resumeAttempts : 0,
            networkLoss: self.configuration.networkLoss, logger: logger,
            rules: rules,
            timers: group, tunnelTLS: Self.tunnelTLS)
        let reporter = NetworkReporter(manager: manager, logger: logger)
        let network = NetworkWatcher(onChange: reporter.report) { error in
            logger.warning("network status unknown from now on: the netlink socket failed: \(error)")
        }
        let processes = ClientProcessLookup(serial: IOExecutor.shared.lane().submit, unit: SystemdUnit.of(pid:))
        let (authority, interception) = Self.interception(
            manager.rules.intercept, self.configuration, self.environment, logger: logger)
        let listener = ProxyListener(
            manager: manager, configuration: listenerConfiguration, group: group, processLookup: processes.start,
            interception: interception, passwordHashing: PasswordHash())
        // How many captures run: the capture socket's receiver sets it, /metrics reads it.
        let capturesRunning = Locked(0)
        let metrics = DaemonMetrics(
            manager: manager, captures: { capturesRunning.withLock { $0 } },
            sessionTransfers: { session.transfersStarted },
            openConnections: { listener.openConnections })
        let control = ControlServer(
            manager: manager, group: group,
            extraStats: { stats in
                stats.openConnections = listener.openConnections
                stats.network = manager.reachability
                stats.upstreamProxy = session.liveUpstreamProxy.status
            },
            metrics: .init(contentType: DaemonMetrics.contentType, exposition: metrics.exposition),
            authority: authority)
        let metricsServer = MetricsServer(group: group, exposition: metrics.exposition)
        let web = WebServer(control: control, group: group)

        let service = DaemonService(
            configuration: self.configuration, environment: self.environment, reload: self.reload,
            logging: logging, logger: logger, session: session, manager: manager,
            servers: .init(
                listener: listener, control: control, web: web, metrics: metricsServer,
                captures: CaptureReceiver(
                    listener: listener, authority: authority, group: group, logger: logger,
                    publish: { running in
                        control.publishCaptures(running)
                        capturesRunning.withLock { $0 = running.count }
                    })),
            network: network)
        let services = ServiceGroup(
            configuration: .init(
                services: Self.stopSequence(
                    service: service, listener: listener, control: control, web: web, metrics: metricsServer
                ).reversed().map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        do {
            try await services.run()
        } catch {
            try? await group.shutdownGracefully()
            manager.releaseLiveTasks()
            throw error
        }
        try await group.shutdownGracefully()
        manager.releaseLiveTasks()
        logger.notice("stopped")
    }

    /// The services in the order they stop: the group starts them all at once and, on SIGTERM or
    /// SIGINT, stops them one at a time in the reverse of the order it was given, each after the
    /// one before has finished. STOPPING=1 first; the proxy stops accepting; running tasks get the
    /// grace period, then the rest is canceled and downloads parked; the control socket, which
    /// showed the draining, closes and ends its streams; then the metrics port and the dashboard;
    /// last `DaemonService` (its watchdog pings and STATUS= lines go on until then) shuts the
    /// session thread down.
    static func stopSequence(
        service: DaemonService, listener: ProxyListener, control: ControlServer, web: WebServer,
        metrics: MetricsServer
    ) -> [any Service] {
        [
            ShutdownStep { service.announceStop() },
            listener,
            ShutdownStep { await service.drain() },
            control,
            metrics,
            web,
            service,
        ]
    }

    /// The rules of every kind the configuration gives, at start and on reload. Reads
    /// `proxy-auth-file`, hence the throw and the logger for its warning.
    static func configuredRules(
        _ configuration: DaemonConfiguration, logger: Logger? = nil
    ) throws(ConfigurationError) -> ConfiguredRules {
        ConfiguredRules(
            throttleDefaults: configuration.throttleDefaults, destinations: configuration.destinations,
            access: AccessRules(
                clients: configuration.allowClients.map(AllowedClients.init) ?? .loopback,
                users: try AccessFiles.proxyUsers(configuration, logger: logger)),
            pins: configuration.pins, security: configuration.securityPolicy, upstream: configuration.upstream,
            intercept: configuration.intercept)
    }

    static func listenerConfiguration(_ configuration: DaemonConfiguration) -> ListenerConfiguration {
        ListenerConfiguration(
            maxConnections: configuration.maxConnections,
            maxHeaderBytes: configuration.maxHeaderBytes,
            idleTimeout: .seconds(configuration.idleTimeout),
            headerTimeout: .seconds(configuration.headerTimeout),
            bodyTimeout: .seconds(configuration.bodyTimeout),
            viaName: configuration.viaName,
            allowedConnectPorts: configuration.allowConnectPorts)
    }

    static func downloadSettings(
        _ configuration: DaemonConfiguration, _ environment: [String: String]
    )
        -> DownloadSettings
    {
        DownloadSettings(
            stateDirectory: configuration.stateDirectory ?? DownloadLocations.stateDirectory(environment),
            downloadDirectory: configuration.downloadDirectory ?? DownloadLocations.downloadDirectory(environment),
            maxActive: configuration.maxActiveDownloads, retries: configuration.downloadRetries,
            writableHint: DownloadLocations.writableHint(environment),
            userAgent: "afproxy/\(AFProxyVersion.current)")
    }

    /// Each client connection and each upstream connection is a descriptor: take the hard limit.
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(fileLimitResource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(fileLimitResource, &limit)
    }
}

#if os(Linux)
/// glibc declares the resource as an enum its functions take as `__rlimit_resource_t`.
private let fileLimitResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#endif

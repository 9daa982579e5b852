import AFProxyAPI
import AFProxyControl
import AFProxyCurl
import AFProxyListener
import AFProxyManager
import AFProxyMetrics
import AFProxyModel
import AFProxyNetwork
import AFProxyServerKit
import AFProxyStore
import AFProxySystemd
import AFProxyWeb
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// One run of the daemon as a service: start (bind or adopt the proxy's and the control socket,
/// bind the metrics port and the dashboard, then READY=1), serve (STATUS= once a second, WATCHDOG=1 pings, SIGHUP reloads), and, the last
/// of `Daemon.stopSequence` to stop, shut the session thread down. Its steps of the stop
/// (STOPPING=1, the grace period) are in DaemonService+Stop.swift.
final class DaemonService: Service, Sendable {
    struct State {
        /// The configuration in force: the last one read that was valid.
        var configuration: DaemonConfiguration
        /// Why the last reload was refused, shown in STATUS= until one succeeds.
        var note: String?
        var stopping = false
        /// Proxy ports came from systemd: `listen` does not apply.
        var adoptedProxy = false
    }

    let started: DaemonConfiguration
    let environment: [String: String]
    let reloadConfiguration: @Sendable () throws(ConfigurationError) -> DaemonConfiguration
    let logging: DaemonLogging
    let logger: Logger
    let session: UpstreamSessions
    let manager: SessionManager
    let listener: ProxyListener
    let control: ControlServer
    let servers: DaemonServers
    /// Follows the network (reachability); started once the sockets are up, stopped last.
    let network: NetworkWatcher
    let notifier: SystemdNotifier
    let taskLog: TaskLog
    let state: Locked<State>
    /// STATUS= lines in the order their snapshots were taken; held while one is computed and sent.
    let statusSequence = Locked(StatusSequence())

    init(
        configuration: DaemonConfiguration, environment: [String: String],
        reload: @escaping @Sendable () throws(ConfigurationError) -> DaemonConfiguration,
        logging: DaemonLogging, logger: Logger, session: UpstreamSessions, manager: SessionManager,
        servers: DaemonServers, network: NetworkWatcher
    ) {
        self.started = configuration
        self.environment = environment
        self.reloadConfiguration = reload
        self.logging = logging
        self.logger = logger
        self.session = session
        self.manager = manager
        self.listener = servers.listener
        self.control = servers.control
        self.servers = servers
        self.network = network
        self.notifier = SystemdNotifier(environment: environment)
        self.taskLog = TaskLog(
            manager: manager, logger: logger, enabled: configuration.logCompletedTasks, structured: logging.journal)
        self.state = Locked(State(configuration: configuration))
    }

    func run() async throws {
        // Trap SIGHUP before READY=1: from then on systemd may send it (ExecReload=).
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        self.taskLog.subscribe()
        let taskLogging = Task { await self.taskLog.run() }
        do {
            try await self.start()
        } catch {
            // The servers close as the group cancels them. A SIGTERM during the start makes a
            // server refuse its socket: then this is a stop, and this service waits for its turn.
            if self.isStopping { try? await gracefulShutdown() }
            self.servers.captures.stop()
            self.session.shutdown()
            self.taskLog.finish()
            await taskLogging.value
            if self.isStopping { return }
            throw error
        }
        do throws(FileError) {
            let restored = try self.manager.downloads.restore()
            if restored > 0 { self.logger.notice("restored \(restored) unfinished download(s) from the journal") }
        } catch {
            self.logger.error("download tasks will not survive a restart: \(error)")
        }
        do throws(NetlinkError) {
            try self.network.start()
        } catch {
            // Fail soft: the proxy serves on; only reachability is missing.
            self.logger.warning("cannot follow the network, its status stays unknown: \(error)")
        }
        self.notifyStatus(.ready)
        self.logger.info("ready; logging to \(self.logging.description)")

        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in hangups { self.reload() }
            }
            if self.notifier.isEnabled {
                group.addTask { await self.reportStatus() }
            }
            group.addTask { await self.sweepStalledTasks() }
            let session = self.session
            if let pinger = WatchdogPinger(notifier: self.notifier, progress: { session.iterations }) {
                self.logger.info(
                    "watchdog: pinging every \(pinger.interval / 2) while the session threads make progress")
                group.addTask { await pinger.run() }
            }
            try? await gracefulShutdown()
            self.servers.captures.stop()
            self.session.shutdown()
            group.cancelAll()
        }
        self.taskLog.finish()
        await taskLogging.value
    }

    // MARK: start

    /// Adopts what systemd handed over, binds the rest; every socket accepts connections when
    /// this returns. Every server binds here, as a service of the group already running: a port
    /// in use fails the start, and the group then stops what it started (the session thread,
    /// the sockets bound before) before the daemon exits.
    private func start() async throws {
        let configuration = self.started
        let descriptors = try ListenFDs.take()
        for note in descriptors.notes { self.logger.notice("\(note)") }
        var proxyAddresses: [String] = []
        if descriptors.proxy.isEmpty {
            for text in configuration.listen {
                let address = try ListenAddress.parse(text)
                let bound = try await self.listener.bind(host: address.host, port: address.port)
                proxyAddresses.append(bound.endpointText)
                self.logger.notice("listening on \(bound.endpointText)")
            }
        } else {
            self.state.withLock { $0.adoptedProxy = true }
            for fd in descriptors.proxy {
                let adopted = try await self.listener.adopt(descriptor: fd)
                proxyAddresses.append(adopted.endpointText)
                self.logger.notice("listening on \(adopted.endpointText) (socket from systemd)")
            }
        }
        self.control.publishProxyAddresses(proxyAddresses)
        if let fd = descriptors.control {
            let path = UnixSocketAddress.boundPath(of: fd) ?? "descriptor \(fd)"
            try await self.control.adopt(descriptor: fd)
            self.logger.notice("control socket at \(path) (socket from systemd)")
            self.bindCaptures(beside: path, mode: 0o660)
        } else {
            let path = ControlSocketPath.resolve(
                flag: configuration.controlSocket, environment: self.environment, uid: getuid())
            let underSystemd = self.environment["INVOCATION_ID"] != nil || self.environment["RUNTIME_DIRECTORY"] != nil
            try await self.control.bind(path: path, mode: underSystemd ? 0o660 : 0o600)
            self.logger.notice("control socket at \(path)")
            self.bindCaptures(beside: path, mode: underSystemd ? 0o660 : 0o600)
        }
        if let text = configuration.socksListen {
            let address = try ListenAddress.parse(text)
            let bound: String
            do {
                bound = try await self.listener.bindSocks(host: address.host, port: address.port).endpointText
            } catch {
                throw ConfigurationError("socks-listen: cannot listen on \(text): \(error)")
            }
            self.logger.notice("SOCKS5 on \(bound)")
        }
        if let text = configuration.metricsListen {
            let address = try ListenAddress.parse(text)
            let bound = try await self.servers.metrics.bind(host: address.host, port: address.port)
            self.logger.notice("metrics at http://\(bound.map(\.endpointText) ?? text)/metrics")
        }
        if let text = configuration.webListen {
            try await Daemon.startWeb(
                self.servers.web, text, configuration, self.environment, control: self.control, logger: self.logger)
        }
    }

    /// The capture socket (`afproxyctl run`), with the control socket's mode: a daemon that
    /// cannot have one serves on without captures, and says so.
    private func bindCaptures(beside control: String, mode: mode_t) {
        let path = CaptureSocketPath.forControlSocket(control)
        do {
            try self.servers.captures.bind(path: path, mode: mode)
            self.logger.info("capture socket at \(path)")
        } catch {
            self.logger.warning("afproxyctl run is not available: \(error)")
        }
    }

    // MARK: status

    /// STATUS=, at most once a second and only when it changed.
    private func reportStatus() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            self.notifyStatus(.periodic)
        }
    }

    /// What a STATUS= line goes out with.
    enum StatusOccasion {
        /// READY=1 (start, end of a reload): sent even when the line is unchanged.
        case ready
        /// STOPPING=1: sent even when the line is unchanged.
        case stopping
        /// The once-a-second report: STATUS= alone, only when it changed.
        case periodic
    }

    /// Takes a snapshot, computes its STATUS= line and sends it, as one step under
    /// `statusSequence`: two threads doing this at once (the reporter and SIGHUP or SIGTERM) send
    /// in the order they read, so the last line systemd shows is never an older snapshot's.
    func notifyStatus(_ occasion: StatusOccasion) {
        self.statusSequence.withLock { sequence in
            let ticket = sequence.ticket()
            let text = self.statusText()
            let line = sequence.admit(text, ticket: ticket, onlyIfChanged: occasion == .periodic)
            switch occasion {
            case .ready: self.notifier.ready(status: line)
            case .stopping: self.notifier.stopping(status: line)
            case .periodic: if let line { self.notifier.status(line) }
            }
        }
    }

    /// The STATUS= text of this moment.
    private func statusText() -> String {
        let stats = self.manager.stats()
        let network = self.manager.reachability.status
        return self.state.withLock { state in
            StatusLine.text(stats: stats, note: state.note, stopping: state.stopping, network: network)
        }
    }
}

/// The text of STATUS=: what runs, what is suspended, what was served, whether the network is
/// unreachable, and why a reload was refused.
enum StatusLine {
    static func text(
        stats: SessionStats, note: String?, stopping: Bool, network: Reachability.Status = .unknown
    ) -> String {
        let running =
            stats.byState[TaskState.running.rawValue, default: 0]
            + stats.byState[TaskState.canceling.rawValue, default: 0]
        let suspended = stats.byState[TaskState.suspended.rawValue, default: 0]
        var text = "\(running) running, \(suspended) suspended, \(stats.served) served"
        if network == .unreachable { text = "network unreachable; " + text }
        if stopping { text = "stopping: " + text }
        if let note { text = note + "; " + text }
        return text
    }
}

import AFProxyListener
import AFProxyRules
import Logging

/// SIGHUP: RELOADING=1, read the configuration again from the same sources (file, environment,
/// flags), then READY=1. Like tinyproxy, the new one is parsed on the side and swapped in only if
/// it is valid; a refused one is logged and shown in STATUS=, and the old one keeps serving.
///
/// What a reload changes at once: the client limits of new connections (max-header-bytes,
/// idle-timeout, header-timeout, body-timeout, allow-connect-port, via-name), log-level, log-completed-tasks,
/// grace-period, the pins and CA file of new TLS connections (pin, tls-ca-file), the default
/// throttle rules (throttle-global, throttle-host; running tasks follow), and the access rules:
/// allow-clients for new connections, proxy-auth-file (read again) for every request from then
/// on, deny-hosts, allow-hosts and deny-private-destinations for new transfers, and network-loss
/// (while the network is gone, the tasks are brought to where the new policy would have put them),
/// and upstream-proxy and upstream-exclude for new transfers and tunnels. Connections
/// already open keep the limits they started with; no task is dropped. The rest is read when the
/// daemon starts and a changed value is logged as waiting for the next restart.
extension DaemonService {
    func reload() {
        guard !self.state.withLock({ $0.stopping }) else { return }
        self.notifier.reloading(status: "reloading the configuration")
        self.logger.notice("SIGHUP: reloading the configuration")
        do {
            let configuration = try self.reloadConfiguration()
            let rules = try Daemon.configuredRules(configuration, logger: self.logger)
            self.apply(configuration, rules: rules)
            self.state.withLock { state in
                state.configuration = configuration
                state.note = nil
            }
            self.logger.notice("configuration reloaded")
        } catch {
            self.state.withLock { $0.note = "configuration refused: \(error)" }
            self.logger.error("configuration refused, the previous one stays in force: \(error)")
        }
        self.notifyStatus(.ready)
    }

    /// The rules of every kind go to the rule book in one step (`RuleBook.apply`), the parent
    /// proxy's route among them; the rest are the settings that are no rules.
    private func apply(_ configuration: DaemonConfiguration, rules: ConfiguredRules) {
        self.listener.reconfigure(Daemon.listenerConfiguration(configuration))
        let proxyChanged = self.manager.rules.liveUpstreamProxy.route != rules.upstream
        self.manager.rules.apply(rules)
        if proxyChanged {
            self.logger.notice("upstream proxy: \(rules.upstream.proxy.map { "\($0)" } ?? "none")")
        }
        self.logging.level.value = Logger.Level(rawValue: configuration.logLevel) ?? .info
        self.taskLog.logsCompletedTasks = configuration.logCompletedTasks
        self.manager.updateNetworkLoss(configuration.networkLoss)
        let adoptedProxy = self.state.withLock { $0.adoptedProxy }
        let waiting = Self.restartOnlyChanges(from: self.started, to: configuration, adoptedProxy: adoptedProxy)
        if !waiting.isEmpty {
            self.logger.warning("changed, taking effect at the next restart: \(waiting.joined(separator: ", "))")
        }
    }

    /// The keys whose new value a running daemon cannot take.
    static func restartOnlyChanges(
        from old: DaemonConfiguration, to new: DaemonConfiguration, adoptedProxy: Bool
    ) -> [String] {
        var keys: [String] = []
        if !adoptedProxy && old.listen != new.listen { keys.append("listen") }
        if old.controlSocket != new.controlSocket { keys.append("control-socket") }
        if old.maxConnections != new.maxConnections { keys.append("max-connections") }
        if old.connectTimeout != new.connectTimeout { keys.append("connect-timeout") }
        if old.upstreamTimeout != new.upstreamTimeout { keys.append("upstream-timeout") }
        if old.tunnelIdleTimeout != new.tunnelIdleTimeout { keys.append("tunnel-idle-timeout") }
        if old.tunnelSplice != new.tunnelSplice { keys.append("tunnel-splice") }
        if old.historySize != new.historySize { keys.append("history-size") }
        if old.bufferBudget != new.bufferBudget { keys.append("buffer-budget") }
        if old.recordMaxTotal != new.recordMaxTotal { keys.append("record-max-total") }
        if old.threads != new.threads { keys.append("threads") }
        if old.logTarget != new.logTarget { keys.append("log-target") }
        if old.stateDirectory != new.stateDirectory { keys.append("state-dir") }
        if old.downloadDirectory != new.downloadDirectory { keys.append("download-dir") }
        if old.caDirectory != new.caDirectory { keys.append("ca-dir") }
        if old.maxActiveDownloads != new.maxActiveDownloads { keys.append("max-active-downloads") }
        if old.downloadRetries != new.downloadRetries { keys.append("download-retries") }
        if old.transparentResume != new.transparentResume { keys.append("transparent-resume") }
        if old.resumeAttempts != new.resumeAttempts { keys.append("resume-attempts") }
        if old.metricsListen != new.metricsListen { keys.append("metrics-listen") }
        if old.socksListen != new.socksListen { keys.append("socks-listen") }
        if old.webListen != new.webListen { keys.append("web-listen") }
        return keys
    }
}

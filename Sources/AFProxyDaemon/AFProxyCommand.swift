import AFProxyAPI
import AFProxyModel
import AFProxyStore
import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// `afproxy`: the daemon's command line. Flags override `AFPROXY_*` environment variables, which
/// override the config file, which overrides the built-in defaults.
package struct AFProxyCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "afproxy",
        abstract: "A local HTTP proxy daemon whose every request is a task you can watch and steer.",
        discussion: """
            Point applications at it with http_proxy=http://127.0.0.1:3128 and steer their requests \
            with afproxyctl. Runs in the foreground; under systemd it is a Type=notify service. \
            SIGHUP reads the configuration again; SIGTERM or SIGINT stops accepting, gives running \
            tasks --grace-period seconds to finish, then exits 0.
            """,
        version: AFProxyVersion.current + Daemon.buildNote
    )

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Address to listen on, HOST:PORT (repeatable; default 127.0.0.1:3128).", valueName: "host:port"))
    var listen: [String] = []

    @Option(name: .long, help: ArgumentHelp("Path of the control socket.", valueName: "path"))
    var controlSocket: String?

    @Option(
        name: .long, help: ArgumentHelp("Config file (key = value lines; see config/afproxy.conf).", valueName: "path"))
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Validate a config file, print the result and exit (0 valid, 1 not).", valueName: "path"))
    var checkConfig: String?

    @Option(name: .long, help: "Client connections at most; over it, 503 (default 4096).")
    var maxConnections: String?

    @Option(name: .long, help: "Largest request header section in bytes, up to 81920; over it, 431 (default 65536).")
    var maxHeaderBytes: String?

    @Option(name: .long, help: "Seconds an idle keep-alive client connection stays open (default 120).")
    var idleTimeout: String?

    @Option(name: .long, help: "Seconds a client has to send a whole request head; then 408 (default 30).")
    var headerTimeout: String?

    @Option(
        name: .long,
        help: "Seconds a client may go silent in the middle of its request body; then 408, or a close (default 60).")
    var bodyTimeout: String?

    @Option(name: .long, help: "Seconds to connect to an upstream server; then 504 (default 30).")
    var connectTimeout: String?

    @Option(name: .long, help: "Seconds an upstream may stay silent while we wait on it; then 504 (default 120).")
    var upstreamTimeout: String?

    @Option(
        name: .long,
        help: "Seconds a CONNECT tunnel may stay silent both ways before it is closed; 0 = never (default 900).")
    var tunnelIdleTimeout: String?

    @Option(name: .long, help: "Completed tasks kept for list --all (default 1000).")
    var historySize: String?

    @Option(
        name: .long,
        help: "Bytes the transfers' buffers may hold beyond their minimum, together, e.g. 64M (default 64M).")
    var bufferBudget: String?

    @Option(
        name: .long,
        help: "Event loop threads for client connections; 0 = one per core less the session thread's (default 0).")
    var threads: String?

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    @Option(
        name: .long,
        help: "Seconds running tasks get to finish after SIGTERM or SIGINT before they are canceled (default 10).")
    var gracePeriod: String?

    @Option(
        name: .long,
        help: ArgumentHelp("One info log entry per completed task, yes or no (default yes).", valueName: "yes|no"))
    var logCompletedTasks: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where logs go: auto (the journal under systemd, else stderr), journal or stderr (default auto).",
            valueName: "target"))
    var logTarget: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A port CONNECT tunnels may reach besides 443, or * for any (repeatable).", valueName: "port"))
    var allowConnectPort: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "This proxy's name in Via headers, and what a looping request is recognised by (default afproxy).",
            valueName: "name"))
    var viaName: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Directory for what survives a restart (the download queue); default $STATE_DIRECTORY under systemd, else $XDG_STATE_HOME/afproxy, else ~/.local/state/afproxy.",
            valueName: "dir"))
    var stateDir: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where a download without -o goes; default $STATE_DIRECTORY/downloads under systemd, else $XDG_DOWNLOAD_DIR, else ~/Downloads.",
            valueName: "dir"))
    var downloadDir: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The local CA of HTTPS interception (ca-key.pem, ca-cert.pem), created on first use; default STATE/ca.",
            valueName: "dir"))
    var caDir: String?

    @Option(name: .long, help: "Download tasks that run at once; the others wait, queued (default 3).")
    var maxActiveDownloads: String?

    @Option(name: .long, help: "Attempts in a row that may move no byte before a download fails (default 10).")
    var downloadRetries: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Continue a proxied GET that broke off with a range request when the origin allows it (default yes).",
            valueName: "yes|no"))
    var transparentResume: String?

    @Option(name: .long, help: "Transparent resumes per proxied task at most (default 3).")
    var resumeAttempts: String?

    @Option(
        name: .customLong("tls-ca-file"),
        help: ArgumentHelp(
            "A CA bundle (PEM) trusted besides the system's, for the TLS origins of download tasks.",
            valueName: "path"))
    var tlsCAFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Public-key pins of a host: 'HOST sha256//BASE64[;sha256//BASE64…]', *.domain for every name below it (repeatable).",
            valueName: "host pins"))
    var pin: [String] = []

    @Option(
        name: .customLong("throttle-global"),
        help: ArgumentHelp(
            "A default limit on every task: 'RATE [down|up]' (500K, 2M, 1.5MiB; repeatable for each direction).",
            valueName: "rate"))
    var throttleGlobal: [String] = []

    @Option(
        name: .customLong("throttle-host"),
        help: ArgumentHelp(
            "A default limit on the tasks to some hosts: 'PATTERN RATE [down|up]' (repeatable).",
            valueName: "pattern rate"))
    var throttleHost: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "While the network is unreachable: wait-downloads (download tasks wait without spending retries), "
                + "suspend-all (and proxied transfers are suspended until it returns) or ignore (default wait-downloads).",
            valueName: "policy"))
    var networkLoss: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve GET /metrics (Prometheus) on HOST:PORT, to whoever can reach it (default off).",
            valueName: "host:port"))
    var metricsListen: String?

    @Option(
        name: .customLong("web"),
        help: ArgumentHelp(
            "Serve the web dashboard on HOST:PORT, behind a token (`afproxyctl web` prints the address; default off).",
            valueName: "host:port"))
    var web: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Client addresses allowed to use the proxy, ADDRESS[/LENGTH] (repeatable; default loopback only).",
            valueName: "cidr"))
    var allowClients: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "File of user:hash lines (yescrypt, bcrypt or sha512crypt): clients must authenticate (407).",
            valueName: "path"))
    var proxyAuthFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Destinations refused with 403: a host, *.domain, an address or ADDRESS/LENGTH (repeatable).",
            valueName: "pattern"))
    var denyHosts: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The only destinations allowed, patterns as for --deny-hosts (repeatable; default all).",
            valueName: "pattern"))
    var allowHosts: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Intercept HTTPS to these hosts with the local CA (a host, *.domain, * for all; repeatable; default none).",
            valueName: "pattern"))
    var interceptHosts: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Never intercept these hosts, patterns as for --intercept-hosts (repeatable).", valueName: "pattern"))
    var interceptExclude: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Pass a host through as a plain tunnel for a while after its client refused the certificate (default yes).",
            valueName: "yes|no"))
    var interceptAutoPassthrough: String?

    @Option(
        name: .long,
        help: ArgumentHelp("How long such a host is passed through (default 3600).", valueName: "seconds"))
    var interceptPassthroughTime: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Refuse private, link-local and loopback destinations once resolved (default no).", valueName: "yes|no"))
    var denyPrivateDestinations: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A parent proxy for every upstream connection: http://[USER:PASS@]HOST:PORT, socks5h://… or none (default none).",
            valueName: "url"))
    var upstreamProxy: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Hosts reached without the parent proxy, patterns as for --deny-hosts (repeatable; loopback always).",
            valueName: "pattern"))
    var upstreamExclude: [String] = []

    /// For scripts/gen-docs and the tests that keep the documentation complete; not for users.
    @Flag(name: .long, help: .hidden) var listConfigKeys = false

    package init() {}

    package func run() async throws {
        if self.listConfigKeys { return print(ConfigKeyListing.text) }
        let environment = ProcessEnvironment.current()
        if let path = self.checkConfig {
            var configuration = DaemonConfiguration()
            do {
                try ConfigurationFile.apply(try Self.read(path), path: path, to: &configuration)
                print("\(path): valid")
                return
            } catch {
                Self.fail("\(error)")
            }
        }
        let configuration: DaemonConfiguration
        do {
            configuration = try self.resolve(environment: environment)
        } catch {
            Self.fail("\(error)")
        }
        let overrides = self.overrides
        do {
            try await Daemon(configuration: configuration, environment: environment) { () throws(ConfigurationError) in
                try overrides.resolve(environment: environment)
            }.run()
        } catch {
            Self.fail("\(error)")
        }
    }

    func resolve(environment: [String: String]) throws(ConfigurationError) -> DaemonConfiguration {
        try self.overrides.resolve(environment: environment)
    }

    /// What the command line says, kept to resolve the configuration again on SIGHUP.
    var overrides: Overrides {
        let flags: [(String, String?)] =
            [
                ("control-socket", self.controlSocket), ("max-connections", self.maxConnections),
                ("max-header-bytes", self.maxHeaderBytes), ("idle-timeout", self.idleTimeout),
                ("header-timeout", self.headerTimeout), ("body-timeout", self.bodyTimeout),
                ("connect-timeout", self.connectTimeout),
                ("upstream-timeout", self.upstreamTimeout), ("tunnel-idle-timeout", self.tunnelIdleTimeout),
                ("history-size", self.historySize), ("buffer-budget", self.bufferBudget),
                ("threads", self.threads), ("log-level", self.logLevel),
                ("grace-period", self.gracePeriod), ("log-completed-tasks", self.logCompletedTasks),
                ("log-target", self.logTarget), ("via-name", self.viaName),
                ("state-dir", self.stateDir), ("download-dir", self.downloadDir),
                ("ca-dir", self.caDir),
                ("max-active-downloads", self.maxActiveDownloads), ("download-retries", self.downloadRetries),
                ("transparent-resume", self.transparentResume), ("resume-attempts", self.resumeAttempts),
                ("tls-ca-file", self.tlsCAFile), ("network-loss", self.networkLoss),
                ("metrics-listen", self.metricsListen),
                ("web-listen", self.web),
            ] + self.allowConnectPort.map { ("allow-connect-port", $0) }  // each one adds a port
            + self.pin.map { ("pin", $0) }
            + [("proxy-auth-file", self.proxyAuthFile), ("deny-private-destinations", self.denyPrivateDestinations)]
            + self.allowClients.map { ("allow-clients", $0) } + self.denyHosts.map { ("deny-hosts", $0) }
            + self.allowHosts.map { ("allow-hosts", $0) }
            + self.interceptHosts.map { ("intercept-hosts", $0) }
            + self.interceptExclude.map { ("intercept-exclude", $0) }
            + [
                ("intercept-auto-passthrough", self.interceptAutoPassthrough),
                ("intercept-passthrough-time", self.interceptPassthroughTime),
            ]
            + self.throttleGlobal.map { ("throttle-global", $0) } + self.throttleHost.map { ("throttle-host", $0) }
            + [("upstream-proxy", self.upstreamProxy)] + self.upstreamExclude.map { ("upstream-exclude", $0) }
        return Overrides(
            config: self.config, listen: self.listen,
            flags: flags.compactMap { name, value in value.map { (name, $0) } })
    }

    struct Overrides: Sendable {
        var config: String?
        var listen: [String]
        var flags: [(name: String, value: String)]

        /// Defaults, then the config file, then `AFPROXY_*` variables, then the flags.
        func resolve(environment: [String: String]) throws(ConfigurationError) -> DaemonConfiguration {
            var configuration = DaemonConfiguration()
            if let path = self.config ?? environment["AFPROXY_CONFIG"] {
                try ConfigurationFile.apply(try AFProxyCommand.read(path), path: path, to: &configuration)
            }
            try ConfigurationFile.applyEnvironment(environment, to: &configuration)
            for (name, value) in self.flags {
                do {
                    try DaemonConfiguration.key(named: name)!.apply(&configuration, value)
                } catch {
                    throw ConfigurationError(error.message, place: "--\(name)")
                }
            }
            if !self.listen.isEmpty {
                for address in self.listen {
                    do { _ = try ListenAddress.parse(address) } catch {
                        throw ConfigurationError(error.message, place: "--listen")
                    }
                }
                configuration.listen = self.listen
            }
            return configuration
        }
    }

    /// Read by hand, not by Foundation's `Data(contentsOf:)`: that refuses a character device
    /// (`--config /dev/null`, an empty config, answered "Permission denied"), and LeakSanitizer
    /// saw it leave its 4 KiB read buffer behind.
    static func read(_ path: String) throws(ConfigurationError) -> String {
        guard let file = fopen(path, "r") else {
            throw ConfigurationError("cannot read config file: \(String(cString: strerror(errno)))", place: path)
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        if ferror(file) != 0 {
            throw ConfigurationError("cannot read config file: \(String(cString: strerror(errno)))", place: path)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func fail(_ message: String) -> Never {
        let line = "afproxy: \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        Glibc.exit(1)
    }
}

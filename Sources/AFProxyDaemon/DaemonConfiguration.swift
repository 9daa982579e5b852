import AFProxyListener
import AFProxyModel
import AFProxyRules

/// Everything the daemon can be told, with its built-in defaults. Sources apply in this order,
/// each overriding the one before: defaults, the config file, `AFPROXY_*` environment variables,
/// command-line flags. `config/afproxy.conf` documents every key.
package struct DaemonConfiguration: Sendable, Equatable {
    /// `HOST:PORT` addresses to listen on; loopback only unless told otherwise (no open proxy).
    package var listen = ["127.0.0.1:3128"]
    /// Nil: the default path of `ControlSocketPath`.
    package var controlSocket: String?
    package var maxConnections = 4096
    package var maxHeaderBytes = 64 * 1024
    /// Seconds.
    package var idleTimeout = 120.0
    package var headerTimeout = 30.0
    /// The longest a client may go silent in the middle of its request body: 408, or a close
    /// once its response started.
    package var bodyTimeout = 60.0
    package var connectTimeout = 30.0
    package var upstreamTimeout = 120.0
    /// A CONNECT tunnel silent both ways this long is closed; 0: never.
    package var tunnelIdleTimeout = 900.0
    package var historySize = 1000
    /// Bytes the receive windows of all tasks may hold beyond their minimum (`ReceiveWindow`).
    package var bufferBudget = 64 << 20
    /// Event loop threads for client connections; 0 means one per core but the session thread's.
    package var threads = 0
    package var logLevel = "info"
    /// Seconds running tasks get to finish after SIGTERM before they are canceled.
    package var gracePeriod = 10.0
    /// One info entry per completed task; failed tasks are logged at error level regardless.
    package var logCompletedTasks = true
    /// Where logs go: `auto`, `journal` or `stderr` (see `LogTarget`).
    package var logTarget = LogTarget.auto
    /// Ports a CONNECT may reach: 443, plus each `allow-connect-port` from every source (the key
    /// adds rather than replaces, as Squid's `SSL_ports` acl lines do); `*` allows any.
    package var allowConnectPorts = ConnectPortPolicy.default
    /// This proxy's name in `Via` (`Via: 1.1 NAME`), both ways and on its own answers; a request
    /// whose `Via` already holds it is a loop (508).
    package var viaName = "afproxy"
    /// What must survive a restart (the download queue); nil: `DownloadLocations.stateDirectory`.
    package var stateDirectory: String?
    /// Where a download without `-o` goes; nil: `DownloadLocations.downloadDirectory`.
    package var downloadDirectory: String?
    /// The local CA's directory; nil: `ca` under the state directory.
    package var caDirectory: String?
    package var maxActiveDownloads = 3
    /// Attempts in a row that may move nothing before a download fails.
    package var downloadRetries = 10
    /// A proxied GET that breaks off is continued with a range request when the origin allows it.
    package var transparentResume = true
    /// Transparent resumes per proxied task.
    package var resumeAttempts = 3
    /// A CA bundle trusted besides the system's, for the TLS origins of download tasks.
    package var tlsCAFile: String?
    /// Public-key pins per host (`pin` lines add, as `allow-connect-port` lines do).
    package var pins = PinSet()
    /// `HOST:PORT` serving `GET /metrics` to Prometheus; nil: off (the control socket's
    /// `GET /metrics` is always there).
    package var metricsListen: String?
    /// `HOST:PORT` of the web dashboard; nil: off. Loopback unless a person names another address.
    package var webListen: String?

    /// The trust of afproxy's own TLS connections.
    package var securityPolicy: SecurityPolicy { SecurityPolicy(caFile: self.tlsCAFile) }
    /// What a loss of the network does to the tasks (`NetworkLossPolicy`).
    package var networkLoss = NetworkLossPolicy.waitDownloads
    /// `allow-clients` as given (each line adds); nil: never set, so loopback only.
    package var allowClients: [IPNetwork]?
    /// `deny-hosts`, `allow-hosts` (each line adds) and `deny-private-destinations`.
    package var destinations = DestinationPolicy()
    /// `intercept-hosts`, `intercept-exclude` (each line adds), `intercept-auto-passthrough` and
    /// `intercept-passthrough-time`: the configuration's part of the intercept rules.
    package var intercept = InterceptRuleSet()
    package var interceptAutoPassthrough = true {
        didSet { self.intercept.passthroughTime = self.interceptPassthrough }
    }
    package var interceptPassthroughTime: Double = 3600 {
        didSet { self.intercept.passthroughTime = self.interceptPassthrough }
    }
    private var interceptPassthrough: Duration? {
        self.interceptAutoPassthrough ? .milliseconds(Int64(self.interceptPassthroughTime * 1000)) : nil
    }
    /// `user:hash` lines; nil: no proxy authentication.
    package var proxyAuthFile: String?
    /// The default throttle rules (`throttle-global`, `throttle-host`); runtime rules go on top.
    package var throttleDefaults: [ThrottleRule] = []
    /// `upstream-proxy` and `upstream-exclude` (each line adds): the parent proxy and the hosts
    /// reached without it.
    package var upstream = UpstreamProxyRoute()

    package init() {}

    /// One settable key: its name in the config file and as a flag (`--max-connections`), its
    /// environment variable, and how to apply a text value.
    struct Key: Sendable {
        var name: String
        var environment: String
        var apply: @Sendable (inout DaemonConfiguration, String) throws(ConfigurationError) -> Void
    }

    static let keys: [Key] = [
        Key(name: "listen", environment: "AFPROXY_LISTEN") { config, value throws(ConfigurationError) in
            let addresses = value.split(separator: ",").map { String($0).trimmed }
            for address in addresses { _ = try ListenAddress.parse(address) }
            config.listen = addresses
        },
        Key(name: "control-socket", environment: "AFPROXY_CONTROL_SOCKET") { config, value in
            config.controlSocket = value
        },
        Key(name: "max-connections", environment: "AFPROXY_MAX_CONNECTIONS") {
            config, value throws(ConfigurationError) in
            config.maxConnections = try integer(value, 1...1_000_000)
        },
        Key(name: "max-header-bytes", environment: "AFPROXY_MAX_HEADER_BYTES") {
            config, value throws(ConfigurationError) in
            config.maxHeaderBytes = try integer(value, 1024...(80 * 1024))
        },
        Key(name: "idle-timeout", environment: "AFPROXY_IDLE_TIMEOUT") { config, value throws(ConfigurationError) in
            config.idleTimeout = try seconds(value)
        },
        Key(name: "header-timeout", environment: "AFPROXY_HEADER_TIMEOUT") { config, value throws(ConfigurationError) in
            config.headerTimeout = try seconds(value)
        },
        Key(name: "body-timeout", environment: "AFPROXY_BODY_TIMEOUT") { config, value throws(ConfigurationError) in
            config.bodyTimeout = try seconds(value)
        },
        Key(name: "connect-timeout", environment: "AFPROXY_CONNECT_TIMEOUT") {
            config, value throws(ConfigurationError) in
            config.connectTimeout = try seconds(value)
        },
        Key(name: "upstream-timeout", environment: "AFPROXY_UPSTREAM_TIMEOUT") {
            config, value throws(ConfigurationError) in
            config.upstreamTimeout = try seconds(value)
        },
        Key(name: "tunnel-idle-timeout", environment: "AFPROXY_TUNNEL_IDLE_TIMEOUT") {
            config, value throws(ConfigurationError) in
            guard let seconds = Double(value), seconds >= 0, seconds <= 86400 * 365 else {
                throw ConfigurationError("expected 0 (never) or a number of seconds, got \(value)")
            }
            config.tunnelIdleTimeout = seconds
        },
        Key(name: "history-size", environment: "AFPROXY_HISTORY_SIZE") { config, value throws(ConfigurationError) in
            config.historySize = try integer(value, 0...1_000_000)
        },
        Key(name: "buffer-budget", environment: "AFPROXY_BUFFER_BUDGET") { config, value throws(ConfigurationError) in
            config.bufferBudget = try size(value, 0...(16 << 30))
        },
        Key(name: "threads", environment: "AFPROXY_THREADS") { config, value throws(ConfigurationError) in
            config.threads = try integer(value, 0...256)
        },
        Key(name: "log-level", environment: "AFPROXY_LOG_LEVEL") { config, value throws(ConfigurationError) in
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains(value) else {
                throw ConfigurationError("must be one of \(levels.joined(separator: ", ")), not \(value)")
            }
            config.logLevel = value
        },
        Key(name: "grace-period", environment: "AFPROXY_GRACE_PERIOD") { config, value throws(ConfigurationError) in
            guard let seconds = Double(value), seconds >= 0, seconds <= 86400 else {
                throw ConfigurationError("expected a number of seconds from 0 to 86400, got \(value)")
            }
            config.gracePeriod = seconds
        },
        Key(name: "log-completed-tasks", environment: "AFPROXY_LOG_COMPLETED_TASKS") {
            config, value throws(ConfigurationError) in
            config.logCompletedTasks = try boolean(value)
        },
        Key(name: "log-target", environment: "AFPROXY_LOG_TARGET") { config, value throws(ConfigurationError) in
            guard let target = LogTarget(rawValue: value) else {
                throw ConfigurationError("must be one of auto, journal, stderr, not \(value)")
            }
            config.logTarget = target
        },
        Key(name: "via-name", environment: "AFPROXY_VIA_NAME") { config, value throws(ConfigurationError) in
            config.viaName = try viaName(value)
        },
        Key(name: "state-dir", environment: "AFPROXY_STATE_DIR") { config, value throws(ConfigurationError) in
            config.stateDirectory = try absolutePath(value)
        },
        Key(name: "download-dir", environment: "AFPROXY_DOWNLOAD_DIR") { config, value throws(ConfigurationError) in
            config.downloadDirectory = try absolutePath(value)
        },
        Key(name: "ca-dir", environment: "AFPROXY_CA_DIR") { config, value throws(ConfigurationError) in
            config.caDirectory = try absolutePath(value)
        },
        Key(name: "max-active-downloads", environment: "AFPROXY_MAX_ACTIVE_DOWNLOADS") {
            config, value throws(ConfigurationError) in
            config.maxActiveDownloads = try integer(value, 1...64)
        },
        Key(name: "download-retries", environment: "AFPROXY_DOWNLOAD_RETRIES") {
            config, value throws(ConfigurationError) in
            config.downloadRetries = try integer(value, 1...1000)
        },
        Key(name: "transparent-resume", environment: "AFPROXY_TRANSPARENT_RESUME") {
            config, value throws(ConfigurationError) in
            config.transparentResume = try boolean(value)
        },
        Key(name: "resume-attempts", environment: "AFPROXY_RESUME_ATTEMPTS") {
            config, value throws(ConfigurationError) in
            config.resumeAttempts = try integer(value, 0...100)
        },
        Key(name: "tls-ca-file", environment: "AFPROXY_TLS_CA_FILE") { config, value throws(ConfigurationError) in
            config.tlsCAFile = try absolutePath(value)
        },
        Key(name: "pin", environment: "AFPROXY_PIN") { config, value throws(ConfigurationError) in
            // The environment variable may hold several, separated by commas.
            for line in value.split(separator: ",").map({ String($0).trimmed }) {
                do throws(PinError) {
                    try config.pins.add(line)
                } catch {
                    throw ConfigurationError(error.message)
                }
            }
        },
        Key(name: "throttle-global", environment: "AFPROXY_THROTTLE_GLOBAL") {
            config, value throws(ConfigurationError) in
            for line in value.split(separator: ",").map({ String($0).trimmed }) {
                try ThrottleDefaults.add(line, host: false, to: &config.throttleDefaults)
            }
        },
        Key(name: "throttle-host", environment: "AFPROXY_THROTTLE_HOST") { config, value throws(ConfigurationError) in
            // The environment variable may hold several, separated by commas.
            for line in value.split(separator: ",").map({ String($0).trimmed }) {
                try ThrottleDefaults.add(line, host: true, to: &config.throttleDefaults)
            }
        },
        Key(name: "network-loss", environment: "AFPROXY_NETWORK_LOSS") { config, value throws(ConfigurationError) in
            guard let policy = NetworkLossPolicy(rawValue: value) else {
                let names = NetworkLossPolicy.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError("must be one of \(names), not \(value)")
            }
            config.networkLoss = policy
        },
        Key(name: "metrics-listen", environment: "AFPROXY_METRICS_LISTEN") { config, value throws(ConfigurationError) in
            _ = try ListenAddress.parse(value)
            config.metricsListen = value
        },
        Key(name: "web-listen", environment: "AFPROXY_WEB_LISTEN") { config, value throws(ConfigurationError) in
            config.webListen = try WebListenAddress.check(value)
        },
        Key(name: "allow-connect-port", environment: "AFPROXY_ALLOW_CONNECT_PORT") {
            config, value throws(ConfigurationError) in
            for port in value.split(separator: ",").map({ String($0).trimmed }) {
                guard config.allowConnectPorts.allow(port) else {
                    throw ConfigurationError("expected a port from 1 to 65535 or *, got \(port)")
                }
            }
        },
        Key(name: "allow-clients", environment: "AFPROXY_ALLOW_CLIENTS") { config, value throws(ConfigurationError) in
            for item in value.split(separator: ",").map({ String($0).trimmed }) {
                guard let network = IPNetwork(item) else {
                    throw ConfigurationError("expected ADDRESS or ADDRESS/LENGTH (10.0.0.0/8, fd00::/8), got \(item)")
                }
                config.allowClients = (config.allowClients ?? []) + [network]
            }
        },
        Key(name: "deny-hosts", environment: "AFPROXY_DENY_HOSTS") { config, value throws(ConfigurationError) in
            config.destinations.denyHosts += try hostPatterns(value)
        },
        Key(name: "allow-hosts", environment: "AFPROXY_ALLOW_HOSTS") { config, value throws(ConfigurationError) in
            config.destinations.allowHosts += try hostPatterns(value)
        },
        Key(name: "intercept-hosts", environment: "AFPROXY_INTERCEPT_HOSTS") {
            config, value throws(ConfigurationError) in
            config.intercept.configured += try hostPatterns(value)
        },
        Key(name: "intercept-exclude", environment: "AFPROXY_INTERCEPT_EXCLUDE") {
            config, value throws(ConfigurationError) in
            config.intercept.excluded += try hostPatterns(value)
        },
        Key(name: "intercept-auto-passthrough", environment: "AFPROXY_INTERCEPT_AUTO_PASSTHROUGH") {
            config, value throws(ConfigurationError) in
            config.interceptAutoPassthrough = try boolean(value)
        },
        Key(name: "intercept-passthrough-time", environment: "AFPROXY_INTERCEPT_PASSTHROUGH_TIME") {
            config, value throws(ConfigurationError) in
            config.interceptPassthroughTime = try seconds(value)
        },
        Key(name: "deny-private-destinations", environment: "AFPROXY_DENY_PRIVATE_DESTINATIONS") {
            config, value throws(ConfigurationError) in
            config.destinations.denyPrivate = try boolean(value)
        },
        Key(name: "proxy-auth-file", environment: "AFPROXY_PROXY_AUTH_FILE") {
            config, value throws(ConfigurationError) in
            config.proxyAuthFile = try absolutePath(value)
        },
        Key(name: "upstream-proxy", environment: "AFPROXY_UPSTREAM_PROXY") {
            config, value throws(ConfigurationError) in
            // `none` lets a flag or the environment switch off a proxy the config file sets.
            guard value != "none" else {
                config.upstream.proxy = nil
                return
            }
            do throws(UpstreamProxyError) {
                config.upstream.proxy = try UpstreamProxy(parsing: value)
            } catch {
                throw ConfigurationError(error.message)
            }
        },
        Key(name: "upstream-exclude", environment: "AFPROXY_UPSTREAM_EXCLUDE") {
            config, value throws(ConfigurationError) in
            config.upstream.exclude += try hostPatterns(value)
        },
    ]

    static func key(named name: String) -> Key? {
        self.keys.first { $0.name == name }
    }

    private static func integer(_ text: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError("expected an integer in \(range.lowerBound)...\(range.upperBound), got \(text)")
        }
        return value
    }

    /// A byte count: digits with an optional binary unit, `512K`, `64M`, `1G` (or `KiB`, `MiB`, `GiB`).
    static func size(_ text: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        let units: [(String, Int)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30),
        ]
        var digits = Substring(text)
        var multiplier = 1
        if let (suffix, factor) = units.first(where: { text.hasSuffix($0.0) }) {
            digits = digits.dropLast(suffix.count)
            multiplier = factor
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int(digits),
            case (let value, let overflow) = number.multipliedReportingOverflow(by: multiplier), !overflow,
            range.contains(value)
        else {
            throw ConfigurationError(
                "expected a size such as 64M (bytes, or with K, M, G), up to \(range.upperBound >> 30)G, got \(text)")
        }
        return value
    }

    /// Comma-separated `HostPattern`s.
    private static func hostPatterns(_ text: String) throws(ConfigurationError) -> [HostPattern] {
        var patterns: [HostPattern] = []
        for item in text.split(separator: ",").map({ String($0).trimmed }) {
            do throws(HostPatternError) {
                patterns.append(try HostPattern(item))
            } catch {
                throw ConfigurationError(error.message)
            }
        }
        return patterns
    }

    private static func boolean(_ text: String) throws(ConfigurationError) -> Bool {
        switch text.lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: throw ConfigurationError("expected yes or no, got \(text)")
        }
    }

    /// A `Via` pseudonym is a token (RFC 9110 §7.6.3, §5.6.2): no spaces, commas or other
    /// delimiters, which would change how the field is read.
    static func viaName(_ text: String) throws(ConfigurationError) -> String {
        let symbols = Set("!#$%&'*+-.^_`|~".utf8)
        let isTokenByte = { (byte: UInt8) -> Bool in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "a")...UInt8(ascii: "z"):
                true
            default: symbols.contains(byte)
            }
        }
        guard (1...64).contains(text.utf8.count), text.utf8.allSatisfy(isTokenByte) else {
            throw ConfigurationError("expected a name of 1 to 64 letters, digits or !#$%&'*+-.^_`|~, got \(text)")
        }
        return text
    }

    private static func absolutePath(_ text: String) throws(ConfigurationError) -> String {
        guard text.hasPrefix("/"), !text.utf8.contains(0) else {
            throw ConfigurationError("expected an absolute path, got \(text)")
        }
        return text.count > 1 && text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    private static func seconds(_ text: String) throws(ConfigurationError) -> Double {
        guard let value = Double(text), value > 0, value <= 86400 * 365 else {
            throw ConfigurationError("expected a number of seconds greater than 0, got \(text)")
        }
        return value
    }
}

/// Where log entries go.
package enum LogTarget: String, Sendable, Equatable {
    /// The journal, with fields, when systemd connected stderr to it (`JOURNAL_STREAM`);
    /// otherwise readable lines on stderr, and the journal as well when its socket is present.
    case auto
    /// Only the journal (entries are dropped if journald does not run).
    case journal
    /// Only readable lines on stderr.
    case stderr
}

/// A value that does not fit its key, or a line that is no key at all; `place` says where.
package struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var place: String?

    package init(_ message: String, place: String? = nil) {
        self.message = message
        self.place = place
    }

    package var description: String {
        self.place.map { "\($0): \(self.message)" } ?? self.message
    }
}

extension String {
    var trimmed: String {
        var view = Substring(self)
        while let first = view.first, first.isWhitespace { view = view.dropFirst() }
        while let last = view.last, last.isWhitespace { view = view.dropLast() }
        return String(view)
    }
}

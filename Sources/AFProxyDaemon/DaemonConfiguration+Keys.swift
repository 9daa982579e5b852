import AFProxyListener
import AFProxyModel
import AFProxyRules

/// The key table: every setting the daemon reads, declared once, and the parsers its values go
/// through.
extension DaemonConfiguration {
    /// One settable key, declared once: its name in the config file, its flag, environment
    /// variable and help, its built-in default, and how to apply a text value. The command line's
    /// options take their help from here and are read back by their key (`AFProxyCommand`); the
    /// key listing, and through it the man page and the checks on the documentation, come from
    /// this table. Adding a key: a field of `DaemonConfiguration`, a `Key` here, an `@Option` line in
    /// `AFProxyCommand`, and its lines in config/afproxy.conf and docs/configuration.md (which
    /// the tests hold to this table).
    struct Key: Sendable {
        var name: String
        /// `--NAME`, unless a shorter flag reads better (`--web`).
        var flag: String
        /// What `--help` says of it, without the default.
        var help: String
        /// The value's name in `--help` (`<host:port>`); nil: the flag's.
        var valueName: String?
        /// The built-in default, as a value this key reads back to it (a test applies it to the
        /// defaults and finds them unchanged); nil where the help says it in words, or there is none.
        var defaultValue: String?
        var apply: @Sendable (inout DaemonConfiguration, String) throws(ConfigurationError) -> Void

        init(
            _ name: String, flag: String? = nil, help: String, valueName: String? = nil, default: String? = nil,
            apply: @escaping @Sendable (inout DaemonConfiguration, String) throws(ConfigurationError) -> Void
        ) {
            self.name = name
            self.flag = flag ?? name
            self.help = help
            self.valueName = valueName
            self.defaultValue = `default`
            self.apply = apply
        }

        /// `AFPROXY_` and the name in capitals, `-` as `_`.
        var environment: String {
            "AFPROXY_" + String(self.name.uppercased().map { $0 == "-" ? "_" : $0 })
        }

        /// The help with its default: `… (default 4096).`, or inside a closing parenthesis,
        /// `… (repeatable; default 127.0.0.1:3128).`
        var helpText: String {
            guard let value = self.defaultValue else { return self.help }
            if self.help.hasSuffix(").") { return self.help.dropLast(2) + "; default \(value))." }
            return self.help.dropLast() + " (default \(value))."
        }
    }

    static let keys: [Key] = [
        Key(
            "listen", help: "Address to listen on, HOST:PORT (repeatable).", valueName: "host:port",
            default: "127.0.0.1:3128"
        ) { config, value throws(ConfigurationError) in
            let addresses = value.split(separator: ",").map { String($0).trimmed }
            for address in addresses { _ = try ListenAddress.parse(address) }
            config.listen = addresses
        },
        Key("control-socket", help: "Path of the control socket.", valueName: "path") { config, value in
            config.controlSocket = value
        },
        Key("max-connections", help: "Client connections at most; over it, 503.", default: "4096") {
            config, value throws(ConfigurationError) in
            config.maxConnections = try integer(value, 1...1_000_000)
        },
        Key(
            "max-header-bytes", help: "Largest request header section in bytes, up to 81920; over it, 431.",
            default: "65536"
        ) {
            config, value throws(ConfigurationError) in
            config.maxHeaderBytes = try integer(value, 1024...(80 * 1024))
        },
        Key("idle-timeout", help: "Seconds an idle keep-alive client connection stays open.", default: "120") {
            config, value throws(ConfigurationError) in
            config.idleTimeout = try seconds(value)
        },
        Key("header-timeout", help: "Seconds a client has to send a whole request head; then 408.", default: "30") {
            config, value throws(ConfigurationError) in
            config.headerTimeout = try seconds(value)
        },
        Key(
            "body-timeout",
            help: "Seconds a client may go silent in the middle of its request body; then 408, or a close.",
            default: "60"
        ) { config, value throws(ConfigurationError) in
            config.bodyTimeout = try seconds(value)
        },
        Key("connect-timeout", help: "Seconds to connect to an upstream server; then 504.", default: "30") {
            config, value throws(ConfigurationError) in
            config.connectTimeout = try seconds(value)
        },
        Key(
            "upstream-timeout", help: "Seconds an upstream may stay silent while we wait on it; then 504.",
            default: "120"
        ) {
            config, value throws(ConfigurationError) in
            config.upstreamTimeout = try seconds(value)
        },
        Key(
            "tunnel-idle-timeout",
            help: "Seconds a CONNECT tunnel may stay silent both ways before it is closed; 0 = never.", default: "900"
        ) {
            config, value throws(ConfigurationError) in
            guard let seconds = Double(value), seconds >= 0, seconds <= 86400 * 365 else {
                throw ConfigurationError("expected 0 (never) or a number of seconds, got \(value)")
            }
            config.tunnelIdleTimeout = seconds
        },
        Key(
            "tunnel-splice",
            help:
                "Move a plain CONNECT tunnel's bytes by splice(2) in the kernel; no keeps every tunnel on the NIO relay.",
            valueName: "yes|no", default: "yes"
        ) {
            config, value throws(ConfigurationError) in
            config.tunnelSplice = try boolean(value)
        },
        Key("history-size", help: "Completed tasks kept for list --all.", default: "1000") {
            config, value throws(ConfigurationError) in
            config.historySize = try integer(value, 0...1_000_000)
        },
        Key(
            "buffer-budget", help: "Bytes the transfers' buffers may hold beyond their minimum, together, e.g. 64M.",
            default: "64M"
        ) { config, value throws(ConfigurationError) in
            config.bufferBudget = try size(value, 0...(16 << 30))
        },
        Key(
            "record-max-total",
            help: "Bytes the bodies that record rules keep may take together (the oldest go first), e.g. 256M.",
            default: "256M"
        ) { config, value throws(ConfigurationError) in
            config.recordMaxTotal = try size(value, (64 << 10)...(64 << 30))
        },
        Key(
            "threads",
            help: "Event loop threads for client connections, each with a curl session of its own; 0 = one per core.",
            default: "0"
        ) { config, value throws(ConfigurationError) in
            config.threads = try integer(value, 0...256)
        },
        Key("log-level", help: "trace, debug, info, notice, warning, error or critical.", default: "info") {
            config, value throws(ConfigurationError) in
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains(value) else {
                throw ConfigurationError("must be one of \(levels.joined(separator: ", ")), not \(value)")
            }
            config.logLevel = value
        },
        Key(
            "grace-period",
            help: "Seconds running tasks get to finish after SIGTERM or SIGINT before they are canceled.", default: "10"
        ) { config, value throws(ConfigurationError) in
            guard let seconds = Double(value), seconds >= 0, seconds <= 86400 else {
                throw ConfigurationError("expected a number of seconds from 0 to 86400, got \(value)")
            }
            config.gracePeriod = seconds
        },
        Key(
            "log-completed-tasks", help: "One info log entry per completed task, yes or no.", valueName: "yes|no",
            default: "yes"
        ) {
            config, value throws(ConfigurationError) in
            config.logCompletedTasks = try boolean(value)
        },
        Key(
            "log-target", help: "Where logs go: auto (the journal under systemd, else stderr), journal or stderr.",
            valueName: "target", default: "auto"
        ) { config, value throws(ConfigurationError) in
            guard let target = LogTarget(rawValue: value) else {
                throw ConfigurationError("must be one of auto, journal, stderr, not \(value)")
            }
            config.logTarget = target
        },
        Key(
            "via-name", help: "This proxy's name in Via headers, and what a looping request is recognised by.",
            valueName: "name", default: "afproxy"
        ) { config, value throws(ConfigurationError) in
            config.viaName = try viaName(value)
        },
        Key(
            "state-dir",
            help:
                "Directory for what survives a restart (the download queue); default $STATE_DIRECTORY under systemd, else $XDG_STATE_HOME/afproxy, else ~/.local/state/afproxy.",
            valueName: "dir"
        ) { config, value throws(ConfigurationError) in
            config.stateDirectory = try absolutePath(value)
        },
        Key(
            "download-dir",
            help:
                "Where a download without -o goes; default $STATE_DIRECTORY/downloads under systemd, else $XDG_DOWNLOAD_DIR, else ~/Downloads.",
            valueName: "dir"
        ) { config, value throws(ConfigurationError) in
            config.downloadDirectory = try absolutePath(value)
        },
        Key(
            "ca-dir",
            help:
                "The local CA of HTTPS interception (ca-key.pem, ca-cert.pem), created on first use; default STATE/ca.",
            valueName: "dir"
        ) { config, value throws(ConfigurationError) in
            config.caDirectory = try absolutePath(value)
        },
        Key("max-active-downloads", help: "Download tasks that run at once; the others wait, queued.", default: "3") {
            config, value throws(ConfigurationError) in
            config.maxActiveDownloads = try integer(value, 1...64)
        },
        Key("download-retries", help: "Attempts in a row that may move no byte before a download fails.", default: "10")
        {
            config, value throws(ConfigurationError) in
            config.downloadRetries = try integer(value, 1...1000)
        },
        Key(
            "transparent-resume",
            help: "Continue a proxied GET that broke off with a range request when the origin allows it.",
            valueName: "yes|no", default: "yes"
        ) {
            config, value throws(ConfigurationError) in
            config.transparentResume = try boolean(value)
        },
        Key("resume-attempts", help: "Transparent resumes per proxied task at most.", default: "3") {
            config, value throws(ConfigurationError) in
            config.resumeAttempts = try integer(value, 0...100)
        },
        Key(
            "tls-ca-file",
            help: "A CA bundle (PEM) trusted besides the system's, for the TLS origins of download tasks.",
            valueName: "path"
        ) { config, value throws(ConfigurationError) in
            config.tlsCAFile = try absolutePath(value)
        },
        Key(
            "pin",
            help:
                "Public-key pins of a host: 'HOST sha256//BASE64[;sha256//BASE64…]', *.domain for every name below it (repeatable).",
            valueName: "host pins"
        ) { config, value throws(ConfigurationError) in
            // The environment variable may hold several, separated by commas.
            for line in value.split(separator: ",").map({ String($0).trimmed }) {
                do throws(PinError) {
                    try config.pins.add(line)
                } catch {
                    throw ConfigurationError(error.message)
                }
            }
        },
        Key(
            "throttle-global",
            help: "A default limit on every task: 'RATE [down|up]' (500K, 2M, 1.5MiB; repeatable for each direction).",
            valueName: "rate"
        ) {
            config, value throws(ConfigurationError) in
            for line in value.split(separator: ",").map({ String($0).trimmed }) {
                try ThrottleDefaults.add(line, host: false, to: &config.throttleDefaults)
            }
        },
        Key(
            "throttle-host", help: "A default limit on the tasks to some hosts: 'PATTERN RATE [down|up]' (repeatable).",
            valueName: "pattern rate"
        ) { config, value throws(ConfigurationError) in
            // The environment variable may hold several, separated by commas.
            for line in value.split(separator: ",").map({ String($0).trimmed }) {
                try ThrottleDefaults.add(line, host: true, to: &config.throttleDefaults)
            }
        },
        Key(
            "network-loss",
            help:
                "While the network is unreachable: wait-downloads (download tasks wait without spending retries), suspend-all (and proxied transfers are suspended until it returns) or ignore.",
            valueName: "policy", default: "wait-downloads"
        ) { config, value throws(ConfigurationError) in
            guard let policy = NetworkLossPolicy(rawValue: value) else {
                let names = NetworkLossPolicy.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError("must be one of \(names), not \(value)")
            }
            config.networkLoss = policy
        },
        Key(
            "metrics-listen",
            help: "Serve GET /metrics (Prometheus) on HOST:PORT, to whoever can reach it (default off).",
            valueName: "host:port"
        ) { config, value throws(ConfigurationError) in
            _ = try ListenAddress.parse(value)
            config.metricsListen = value
        },
        Key(
            "socks-listen",
            help:
                "Serve SOCKS5 on HOST:PORT: CONNECT, names resolved by afproxy, proxy-auth-file's users (default off).",
            valueName: "host:port"
        ) { config, value throws(ConfigurationError) in
            _ = try ListenAddress.parse(value)
            config.socksListen = value
        },
        Key(
            "web-listen", flag: "web",
            help:
                "Serve the web dashboard on HOST:PORT, behind a token (`afproxyctl web` prints the address; default off).",
            valueName: "host:port"
        ) { config, value throws(ConfigurationError) in
            config.webListen = try WebListenAddress.check(value)
        },
        Key(
            "allow-connect-port", help: "A port CONNECT tunnels may reach besides 443, or * for any (repeatable).",
            valueName: "port"
        ) {
            config, value throws(ConfigurationError) in
            for port in value.split(separator: ",").map({ String($0).trimmed }) {
                guard config.allowConnectPorts.allow(port) else {
                    throw ConfigurationError("expected a port from 1 to 65535 or *, got \(port)")
                }
            }
        },
        Key(
            "allow-clients",
            help: "Client addresses allowed to use the proxy, ADDRESS[/LENGTH] (repeatable; default loopback only).",
            valueName: "cidr"
        ) { config, value throws(ConfigurationError) in
            for item in value.split(separator: ",").map({ String($0).trimmed }) {
                guard let network = IPNetwork(item) else {
                    throw ConfigurationError("expected ADDRESS or ADDRESS/LENGTH (10.0.0.0/8, fd00::/8), got \(item)")
                }
                config.allowClients = (config.allowClients ?? []) + [network]
            }
        },
        Key(
            "deny-hosts",
            help: "Destinations refused with 403: a host, *.domain, an address or ADDRESS/LENGTH (repeatable).",
            valueName: "pattern"
        ) { config, value throws(ConfigurationError) in
            config.destinations.denyHosts += try hostPatterns(value)
        },
        Key(
            "allow-hosts",
            help: "The only destinations allowed, patterns as for --deny-hosts (repeatable; default all).",
            valueName: "pattern"
        ) { config, value throws(ConfigurationError) in
            config.destinations.allowHosts += try hostPatterns(value)
        },
        Key(
            "intercept-hosts",
            help:
                "Intercept HTTPS to these hosts with the local CA (a host, *.domain, * for all; repeatable; default none).",
            valueName: "pattern"
        ) {
            config, value throws(ConfigurationError) in
            config.intercept.configured += try hostPatterns(value)
        },
        Key(
            "intercept-exclude", help: "Never intercept these hosts, patterns as for --intercept-hosts (repeatable).",
            valueName: "pattern"
        ) {
            config, value throws(ConfigurationError) in
            config.intercept.excluded += try hostPatterns(value)
        },
        Key(
            "intercept-auto-passthrough",
            help: "Pass a host through as a plain tunnel for a while after its client refused the certificate.",
            valueName: "yes|no", default: "yes"
        ) {
            config, value throws(ConfigurationError) in
            config.interceptAutoPassthrough = try boolean(value)
        },
        Key(
            "intercept-passthrough-time", help: "How long such a host is passed through.", valueName: "seconds",
            default: "3600"
        ) {
            config, value throws(ConfigurationError) in
            config.interceptPassthroughTime = try seconds(value)
        },
        Key(
            "deny-private-destinations", help: "Refuse private, link-local and loopback destinations once resolved.",
            valueName: "yes|no", default: "no"
        ) {
            config, value throws(ConfigurationError) in
            config.destinations.denyPrivate = try boolean(value)
        },
        Key(
            "proxy-auth-file",
            help: "File of user:hash lines (yescrypt, bcrypt or sha512crypt): clients must authenticate (407).",
            valueName: "path"
        ) {
            config, value throws(ConfigurationError) in
            config.proxyAuthFile = try absolutePath(value)
        },
        Key(
            "upstream-proxy",
            help: "An upstream proxy for every upstream connection: http://[USER:PASS@]HOST:PORT, socks5h://… or none.",
            valueName: "url", default: "none"
        ) {
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
        Key(
            "upstream-exclude",
            help:
                "Hosts reached without the upstream proxy, patterns as for --deny-hosts (repeatable; loopback always).",
            valueName: "pattern"
        ) {
            config, value throws(ConfigurationError) in
            config.upstream.exclude += try hostPatterns(value)
        },
    ]

    static func key(named name: String) -> Key? {
        self.keys.first { $0.name == name }
    }

    /// The key of a command-line option, by its property's name (`maxConnections`, `tlsCAFile`,
    /// `web`): the flag's letters, case and dashes aside.
    static func key(option property: String) -> Key? {
        let letters = { (text: String) in String(text.lowercased().filter { $0 != "-" }) }
        let wanted = letters(property)
        return self.keys.first { letters($0.flag) == wanted }
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

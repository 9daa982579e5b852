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
    /// Plain CONNECT tunnels move their bytes by splice(2) once both sides are connected.
    package var tunnelSplice = true
    package var historySize = 1000
    /// Bytes the receive windows of all tasks may hold beyond their minimum (`ReceiveWindow`).
    package var bufferBudget = 64 << 20
    /// What the bodies record rules keep may take on disk together (`BodyStore`).
    package var recordMaxTotal = 256 << 20
    /// Event loop threads for client connections, each paired with a curl session thread of its
    /// own; 0 means one per core.
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
    /// `socks-listen`: the SOCKS5 port, off when nil.
    package var socksListen: String?
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
    /// `upstream-proxy` and `upstream-exclude` (each line adds): the upstream proxy and the hosts
    /// reached without it.
    package var upstream = UpstreamProxyRoute()

    package init() {}
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

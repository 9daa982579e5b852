import AFProxySystemd
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's loggers: the journal with structured fields under systemd, readable lines on
/// stderr elsewhere (see `LogTarget`), behind one log level that a reload can change.
struct DaemonLogging: Sendable {
    let level: SharedLogLevel
    let journal: Bool
    let stderr: Bool

    init(configuration: DaemonConfiguration, environment: [String: String]) {
        self.level = SharedLogLevel(Logger.Level(rawValue: configuration.logLevel) ?? .info)
        (self.journal, self.stderr) = Self.destinations(
            configuration.logTarget,
            stderrIsJournal: JournalLogHandler.stderrIsJournal(environment: environment),
            socketPresent: JournalLogHandler.socketPresent)
    }

    /// Where entries go. `auto`: the journal alone when stderr already goes there, else stderr,
    /// plus the journal when its socket exists (a foreground run on a systemd machine).
    static func destinations(
        _ target: LogTarget, stderrIsJournal: Bool, socketPresent: Bool
    ) -> (journal: Bool, stderr: Bool) {
        switch target {
        case .journal: (true, false)
        case .stderr: (false, true)
        case .auto: stderrIsJournal ? (true, false) : (socketPresent, true)
        }
    }

    func logger(label: String = "afproxy") -> Logger {
        var handlers: [any LogHandler] = []
        if self.journal {
            var journal = JournalLogHandler(identifier: "afproxy")
            journal.logLevel = .trace
            handlers.append(journal)
        }
        if self.stderr {
            handlers.append(StderrLogHandler(label: label))
        }
        let inner: any LogHandler = handlers.count == 1 ? handlers[0] : MultiplexLogHandler(handlers)
        return Logger(label: label) { _ in SharedLevelLogHandler(inner: inner, level: self.level) }
    }

    var description: String {
        switch (self.journal, self.stderr) {
        case (true, true): "the journal and stderr"
        case (true, false): "the journal"
        default: "stderr"
        }
    }
}

/// The daemon's log level, one for all its loggers, changed by a reload.
final class SharedLogLevel: Sendable {
    private let index: Atomic<Int>

    init(_ level: Logger.Level) {
        self.index = Atomic(Logger.Level.allCases.firstIndex(of: level)!)
    }

    var value: Logger.Level {
        get { Logger.Level.allCases[self.index.load(ordering: .relaxed)] }
        set { self.index.store(Logger.Level.allCases.firstIndex(of: newValue)!, ordering: .relaxed) }
    }
}

/// Wraps the real handlers so that their level is the shared one, unless a logger sets its own.
struct SharedLevelLogHandler: LogHandler {
    var inner: any LogHandler
    let level: SharedLogLevel
    private var override: Logger.Level?

    init(inner: any LogHandler, level: SharedLogLevel) {
        self.inner = inner
        self.level = level
    }

    var logLevel: Logger.Level {
        get { self.override ?? self.level.value }
        set { self.override = newValue }
    }

    var metadata: Logger.Metadata {
        get { self.inner.metadata }
        set { self.inner.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { self.inner.metadataProvider }
        set { self.inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.inner[metadataKey: key] }
        set { self.inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        self.inner.log(event: event)
    }
}

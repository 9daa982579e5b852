import AFProxyModel
import FoundationEssentials
import Logging
import Testing

@testable import AFProxyDaemon

@Suite struct SystemdWiringTests {
    @Test func newKeysInFileEnvironmentAndFlags() throws {
        var configuration = DaemonConfiguration()
        #expect(configuration.gracePeriod == 10)
        #expect(configuration.logCompletedTasks)
        #expect(configuration.logTarget == .auto)
        try ConfigurationFile.apply(
            "grace-period = 2.5\nlog-completed-tasks = no\nlog-target = journal", path: "t.conf", to: &configuration)
        #expect(configuration.gracePeriod == 2.5)
        #expect(!configuration.logCompletedTasks)
        #expect(configuration.logTarget == .journal)
        try ConfigurationFile.apply("grace-period = 0", path: "t.conf", to: &configuration)
        #expect(configuration.gracePeriod == 0)

        let command = try AFProxyCommand.parse([
            "--grace-period", "3", "--log-completed-tasks", "yes", "--log-target", "stderr",
        ])
        let resolved = try command.resolve(environment: [
            "AFPROXY_GRACE_PERIOD": "7", "AFPROXY_LOG_COMPLETED_TASKS": "off",
        ])
        #expect(resolved.gracePeriod == 3)
        #expect(resolved.logCompletedTasks)
        #expect(resolved.logTarget == .stderr)
        #expect(
            try AFProxyCommand.parse([]).resolve(environment: ["AFPROXY_LOG_COMPLETED_TASKS": "off"]).logCompletedTasks
                == false)
    }

    @Test func badValuesOfTheNewKeysNameTheirPlace() {
        var configuration = DaemonConfiguration()
        for line in ["grace-period = -1", "grace-period = soon", "log-completed-tasks = maybe", "log-target = syslog"] {
            #expect(throws: ConfigurationError.self) {
                try ConfigurationFile.apply(line, path: "c.conf", to: &configuration)
            }
        }
        #expect(
            throws: ConfigurationError(
                "log-target: must be one of auto, journal, stderr, not syslog", place: "c.conf:1")
        ) {
            try ConfigurationFile.apply("log-target = syslog", path: "c.conf", to: &configuration)
        }
        for line in ["tunnel-idle-timeout = -1", "tunnel-idle-timeout = soon", "tunnel-idle-timeout ="] {
            #expect(throws: ConfigurationError.self) {
                try ConfigurationFile.apply(line, path: "c.conf", to: &configuration)
            }
        }
        try? ConfigurationFile.apply("tunnel-idle-timeout = 0", path: "c.conf", to: &configuration)
        #expect(configuration.tunnelIdleTimeout == 0)
    }

    @Test func theExampleConfigHasEveryKeyWithItsDefault() throws {
        var configuration = DaemonConfiguration()
        let path = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let example = try AFProxyCommand.read("/\(path)/config/afproxy.conf")
        try ConfigurationFile.apply(example, path: "afproxy.conf", to: &configuration)
        var defaults = DaemonConfiguration()
        defaults.controlSocket = nil
        #expect(configuration == defaults)
        for key in DaemonConfiguration.keys {
            #expect(
                example.contains("\n\(key.name) = ") || example.contains("\n# \(key.name) = "), "\(key.name) missing")
        }
    }

    @Test func logDestinations() {
        #expect(DaemonLogging.destinations(.auto, stderrIsJournal: true, socketPresent: true) == (true, false))
        #expect(DaemonLogging.destinations(.auto, stderrIsJournal: false, socketPresent: true) == (true, true))
        #expect(DaemonLogging.destinations(.auto, stderrIsJournal: false, socketPresent: false) == (false, true))
        #expect(DaemonLogging.destinations(.journal, stderrIsJournal: false, socketPresent: false) == (true, false))
        #expect(DaemonLogging.destinations(.stderr, stderrIsJournal: true, socketPresent: true) == (false, true))
    }

    @Test func sharedLevelFollowsReloads() {
        let level = SharedLogLevel(.info)
        let logger = Logger(label: "t") { _ in SharedLevelLogHandler(inner: SwiftLogNoOpLogHandler(), level: level) }
        #expect(logger.logLevel == .info)
        level.value = .debug
        #expect(logger.logLevel == .debug)
    }

    @Test func statusLine() {
        var stats = SessionStats()
        stats.byState = ["running": 2, "canceling": 1, "suspended": 1]
        stats.served = 40
        #expect(StatusLine.text(stats: stats, note: nil, stopping: false) == "3 running, 1 suspended, 40 served")
        #expect(
            StatusLine.text(stats: stats, note: nil, stopping: true) == "stopping: 3 running, 1 suspended, 40 served")
        #expect(
            StatusLine.text(stats: SessionStats(), note: "configuration refused: a:1: x", stopping: false)
                == "configuration refused: a:1: x; 0 running, 0 suspended, 0 served")
    }

    @Test func restartOnlyKeys() {
        let old = DaemonConfiguration()
        var new = old
        new.maxHeaderBytes = 2048
        new.logLevel = "debug"
        new.gracePeriod = 1
        #expect(DaemonService.restartOnlyChanges(from: old, to: new, adoptedProxy: false).isEmpty)
        new.listen = ["127.0.0.1:8080"]
        new.threads = 3
        #expect(DaemonService.restartOnlyChanges(from: old, to: new, adoptedProxy: false) == ["listen", "threads"])
        #expect(DaemonService.restartOnlyChanges(from: old, to: new, adoptedProxy: true) == ["threads"])
    }

    @Test func completedTaskEntries() {
        var record = TaskRecord(
            id: 7, kind: .data, state: .completed, method: "GET", url: "http://h/x", client: "127.0.0.1:1",
            createdAt: Date(), status: 200)
        record.download.completed = 1000
        let (level, message, metadata) = TaskLog.entry(record, durationMs: 12)
        #expect(level == .info)
        #expect(message == "task 7: GET http://h/x 200, 1000 bytes down, 0 up, 12 ms")
        #expect(metadata["task_id"] == "7")
        #expect(metadata["status"] == "200")
        #expect(metadata["bytes_down"] == "1000")
        #expect(metadata["bytes_up"] == "0")
        #expect(metadata["duration_ms"] == "12")
        #expect(metadata["error"] == nil)
        // Without the journal, only the line is written: same message, no fields built.
        let plain = TaskLog.entry(record, durationMs: 12, structured: false)
        #expect(plain.1 == message && plain.0 == .info && plain.2.isEmpty)

        record.status = nil
        record.error = "connection to upstream failed: refused"
        record.errorCode = "connection-refused"
        #expect(TaskLog.entry(record, durationMs: 1).0 == .error)
        #expect(TaskLog.entry(record, durationMs: 1).2["status"] == nil)
        // A cancel is told apart by its code, whatever its text says.
        for code in ["canceled", "client-closed", "daemon-stopping"] {
            record.error = "ended"
            record.errorCode = code
            #expect(TaskLog.entry(record, durationMs: 1).0 == .info)
        }
    }
}

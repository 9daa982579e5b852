import AFProxyManager
import AFProxyModel
import FoundationEssentials
import Logging
import Synchronization

/// One log entry per completed task, with the task's figures as metadata (journal fields
/// AFPROXY_TASK_ID, AFPROXY_METHOD, AFPROXY_URL, AFPROXY_STATUS, AFPROXY_BYTES_UP,
/// AFPROXY_BYTES_DOWN, AFPROXY_DURATION_MS, and AFPROXY_ERROR for a failure): at info level,
/// which `log-completed-tasks = no` turns off, or at error level for a task that failed, always.
///
/// The event bus calls the subscriber on the session thread, so it only takes the time and
/// enqueues; `run()` writes the entries from a task of its own.
final class TaskLog: Sendable {
    struct Entry: Sendable {
        var record: TaskRecord
        var durationMs: Int
    }

    private let manager: SessionManager
    private let logger: Logger
    private let enabled: Atomic<Bool>
    private let stream: AsyncStream<Entry>
    private let continuation: AsyncStream<Entry>.Continuation
    private let token = Mutex<Int?>(nil)

    init(manager: SessionManager, logger: Logger, enabled: Bool) {
        self.manager = manager
        self.logger = logger
        self.enabled = Atomic(enabled)
        // Bounded: if the journal stalls, the oldest entries waiting are dropped, not memory.
        (self.stream, self.continuation) = AsyncStream.makeStream(of: Entry.self, bufferingPolicy: .bufferingNewest(10_000))
    }

    /// Completed tasks logged at info level (a reload may change it).
    var logsCompletedTasks: Bool {
        get { self.enabled.load(ordering: .relaxed) }
        set { self.enabled.store(newValue, ordering: .relaxed) }
    }

    func subscribe() {
        // `finish()` unsubscribes, which ends the cycle bus → subscriber → self → manager → bus.
        let token = self.manager.events.subscribe([.completed]) { [self] event in
            let record = event.task
            guard Self.isFailure(record) || self.logsCompletedTasks else { return }
            let duration = Date().timeIntervalSince(record.createdAt) * 1000
            self.continuation.yield(Entry(record: record, durationMs: max(0, Int(duration.rounded()))))
        }
        self.token.withLock { $0 = token }
    }

    /// Writes entries until `finish()`, then what was still queued.
    func run() async {
        for await entry in self.stream {
            let (level, message, metadata) = Self.entry(entry.record, durationMs: entry.durationMs)
            self.logger.log(level: level, "\(message)", metadata: metadata)
        }
    }

    func finish() {
        if let token = self.token.withLock({ value in defer { value = nil }; return value }) {
            self.manager.events.unsubscribe(token)
        }
        self.continuation.finish()
    }

    /// A task that failed for another reason than a cancel (by a person, or by its client).
    static func isFailure(_ record: TaskRecord) -> Bool {
        guard let error = record.error else { return false }
        return !error.hasPrefix("canceled")
    }

    static func entry(_ record: TaskRecord, durationMs: Int) -> (Logger.Level, String, Logger.Metadata) {
        var metadata: Logger.Metadata = [
            "task_id": "\(record.id)",
            "kind": "\(record.kind.rawValue)",
            "method": "\(record.method)",
            "url": "\(record.url)",
            "client": "\(record.client)",
            "bytes_up": "\(record.upload.completed)",
            "bytes_down": "\(record.download.completed)",
            "duration_ms": "\(durationMs)",
        ]
        if let status = record.status { metadata["status"] = "\(status)" }
        var message = "task \(record.id): \(record.method) \(record.url)"
        if let status = record.status { message += " \(status)" }
        if let error = record.error {
            metadata["error"] = "\(error)"
            message += " failed: \(error)"
        }
        message += ", \(record.download.completed) bytes down, \(record.upload.completed) up, \(durationMs) ms"
        return (Self.isFailure(record) ? .error : .info, message, metadata)
    }
}

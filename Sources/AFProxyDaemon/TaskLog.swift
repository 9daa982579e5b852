import AFProxyManager
import AFProxyModel
import FoundationEssentials
import Logging
import Synchronization

/// One log entry per completed task, with the task's figures as metadata (journal fields
/// AFPROXY_TASK_ID, AFPROXY_METHOD, AFPROXY_URL, AFPROXY_STATUS, AFPROXY_BYTES_UP,
/// AFPROXY_BYTES_DOWN, AFPROXY_DURATION_MS, AFPROXY_ERROR for a failure, and AFPROXY_CLIENT_PID,
/// _EXE, _UNIT, _USER, _UID for a client process known when the task completed): at info level,
/// which `log-completed-tasks = no` turns off, or at error level for a task that failed, always.
///
/// The event bus calls the subscriber on the session thread, so it only takes the time and
/// queues the entry; `run()` writes the entries from a task of its own, in batches: the first
/// entry into an empty queue rings a doorbell, and the writer waits `batchDelay` before it
/// drains, so that a busy daemon wakes it about 20 times a second instead of once per request.
/// (Resuming an `AsyncStream` consumer per entry cost a thread wakeup per request, a large share
/// of the daemon's CPU under load.)
final class TaskLog: Sendable {
    struct Entry: Sendable {
        var record: TaskRecord
        var durationMs: Int
    }

    private struct Queue {
        var entries: [Entry] = []
        var dropped = 0
    }

    /// How long the writer lets entries gather after the doorbell rang.
    static let batchDelay: Duration = .milliseconds(50)
    /// Entries waiting at most: if the journal stalls, newer entries are counted and dropped,
    /// not kept in memory.
    static let capacity = 10_000

    let manager: SessionManager
    private let logger: Logger
    private let enabled: Atomic<Bool>
    /// Whether a handler reads metadata (the journal's fields); stderr lines do not, and the
    /// eight-entry dictionary per request is then not built.
    private let structured: Bool
    private let queue = Locked(Queue())
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation
    private let token = Locked<Int?>(nil)

    init(manager: SessionManager, logger: Logger, enabled: Bool, structured: Bool) {
        self.manager = manager
        self.logger = logger
        self.enabled = Atomic(enabled)
        self.structured = structured
        (self.doorbell, self.ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
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
            guard record.isFailure || self.logsCompletedTasks else { return }
            let duration = Date().timeIntervalSince(record.createdAt) * 1000
            self.enqueue(Entry(record: record, durationMs: max(0, Int(duration.rounded()))))
        }
        self.token.withLock { $0 = token }
    }

    private func enqueue(_ entry: Entry) {
        let first = self.queue.withLock { queue in
            guard queue.entries.count < Self.capacity else {
                queue.dropped += 1
                return false
            }
            queue.entries.append(entry)
            return queue.entries.count == 1
        }
        if first { self.ring.yield() }
    }

    /// Writes entries until `finish()`, then what was still queued.
    func run() async {
        for await _ in self.doorbell {
            try? await Task.sleep(for: Self.batchDelay)
            self.drain()
        }
        self.drain()
    }

    private func drain() {
        let (entries, dropped) = self.queue.withLock { queue in
            defer { queue = Queue() }
            return (queue.entries, queue.dropped)
        }
        StderrLogHandler.batched {
            for var entry in entries {
                self.addLateClientProcess(to: &entry.record)
                let (level, message, metadata) = Self.entry(
                    entry.record, durationMs: entry.durationMs, structured: self.structured)
                self.logger.log(level: level, "\(message)", metadata: metadata)
            }
        }
        if dropped > 0 {
            self.logger.warning("\(dropped) completed-task entries dropped: the log did not keep up")
        }
    }

    func finish() {
        if let token = self.token.withLock({ value in
            defer { value = nil }; return value
        }) {
            self.manager.events.unsubscribe(token)
        }
        self.ring.finish()
    }

    static func entry(
        _ record: TaskRecord, durationMs: Int, structured: Bool = true
    ) -> (Logger.Level, String, Logger.Metadata) {
        var message = "task \(record.id): \(record.method) \(record.url)"
        if let status = record.status { message += " \(status)" }
        if let error = record.error { message += " failed: \(error)" }
        message += ", \(record.download.completed) bytes down, \(record.upload.completed) up, \(durationMs) ms"
        let level: Logger.Level = record.isFailure ? .error : .info
        guard structured else { return (level, message, [:]) }
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
        if let error = record.error { metadata["error"] = "\(error)" }
        if let process = record.clientProcess { Self.addClientProcess(process, to: &metadata) }
        return (level, message, metadata)
    }
}

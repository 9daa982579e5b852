import AFProxyModel
import FoundationEssentials
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where recorded bodies go (record rules, `BodyRecorder`): one file a body in `directory`
/// (`bodies/` in the state directory, 0700; files 0600: bodies carry secrets), written on one
/// lane of the I/O executor, never on the session thread or an event loop. The files together
/// stay within `maxTotal` bytes: the oldest bodies are removed first to make room for new bytes.
package final class BodyStore: Sendable {
    package let directory: String
    package let maxTotal: Int64
    private let lane = IOExecutor.shared.lane()
    private let state = Locked(State())

    fileprivate struct State {
        /// The bytes each body's file holds (lane only), oldest first in `order`: a ring, since
        /// at the total every new body removes the oldest, and an array's front removal walked
        /// every kept name (hundreds of thousands of 1 KiB bodies under 256 MiB).
        var sizes: [String: Int64] = [:]
        var order = CircularBuffer<String>()
        var total: Int64 = 0
        /// Bodies removed to keep the total: their recorders, and the records of their completed
        /// tasks, hear of it. The latest `removedKept` only (`removedOrder`), so that a daemon that
        /// records for months does not keep a name for every body it ever dropped.
        var removed: Set<String> = []
        var removedOrder = CircularBuffer<String>()
        var madeDirectory = false
    }

    package static let defaultMaxTotal: Int64 = 256 << 20
    /// How many removed bodies are remembered as removed (410 rather than 404).
    static let removedKept = 65536
    /// What may wait for the disk across every body: each body's own bound (`BodyRecording`)
    /// holds per body, and many small bodies at once would otherwise queue without end.
    package static let unwrittenLimit: Int64 = 64 << 20
    private let unwritten = Atomic<Int64>(0)

    package init(directory: String, maxTotal: Int64 = BodyStore.defaultMaxTotal) {
        self.directory = directory
        self.maxTotal = maxTotal
    }

    /// Starts keeping one body of task `task`: up to `limit` bytes, for record rule `rule`.
    package func recorder(task: Int, side: BodySide, rule: Int, limit: Int64) -> BodyRecorder {
        BodyRecorder(
            store: self, name: Self.name(task: task, side: side), recording: BodyRecording(rule: rule, limit: limit))
    }

    package func path(task: Int, side: BodySide) -> String {
        "\(self.directory)/\(Self.name(task: task, side: side))"
    }

    /// The body as kept, read whole (bounded by the largest rule limit) on the lane, after every
    /// write queued before: a task that completed has all its bytes in it. Blocking, for a route
    /// that runs off the event loops. Nil when there is no file (never recorded, or removed).
    package func contents(task: Int, side: BodySide) throws(FileError) -> Data? {
        let path = self.path(task: task, side: side)
        let read = Locked<Result<Data?, FileError>>(.success(nil))
        self.lane.wait {
            let result = Result { () throws(FileError) in try Files.contents(of: path) }
            read.withLock { $0 = result }
        }
        return try read.withLock { $0 }.get()
    }

    /// The bodies on disk now and their bytes.
    package var usage: (bodies: Int, bytes: Int64) {
        self.state.withLock { ($0.order.count, $0.total) }
    }

    /// Whether the body was removed to keep the total.
    package func wasRemoved(task: Int, side: BodySide) -> Bool {
        self.wasRemoved(name: Self.name(task: task, side: side))
    }

    fileprivate func wasRemoved(name: String) -> Bool {
        self.state.withLock { $0.removed.contains(name) }
    }

    /// Files a previous run left: the tasks they belonged to are gone with it.
    package func clear() {
        self.lane.submit {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: self.directory) else { return }
            for name in names where name.hasSuffix(".body") { unlink("\(self.directory)/\(name)") }
        }
    }

    private static func name(task: Int, side: BodySide) -> String { "\(task)-\(side.rawValue).body" }

    /// Lane only: appends `bytes` to the body's file, first removing the oldest bodies while the
    /// total would pass `maxTotal`. Answers the errno of a failed write, or why nothing was written.
    fileprivate func write(_ bytes: ByteBuffer, to name: String) -> WriteResult {
        let count = Int64(bytes.readableBytes)
        guard self.makeDirectory() else { return .failed }
        let fits = self.state.withLock { state -> Bool in
            while state.total + count > self.maxTotal, let index = state.order.firstIndex(where: { $0 != name }) {
                // The oldest, or the one after it when the oldest is the body written now.
                let oldest = state.order.remove(at: index)
                unlink("\(self.directory)/\(oldest)")
                state.total -= state.sizes.removeValue(forKey: oldest) ?? 0
                state.remember(removed: oldest)
            }
            return state.total + count <= self.maxTotal
        }
        guard fits else { return .noRoom }
        let path = "\(self.directory)/\(name)"
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failed }
        defer { close(fd) }
        guard bytes.withUnsafeReadableBytes({ Files.writeAll(fd, $0) }) == nil else {
            // A write the disk cut short: the file goes back to what was whole before it, so it
            // never holds more than the body's recorded size.
            _ = ftruncate(fd, off_t(self.state.withLock { $0.sizes[name] ?? 0 }))
            return .failed
        }
        self.state.withLock { state in
            if state.sizes[name] == nil { state.order.append(name) }
            state.sizes[name, default: 0] += count
            state.total += count
        }
        return .written
    }

    /// Lane only: empties the body's file, its bytes out of the total.
    fileprivate func empty(_ name: String) {
        let path = "\(self.directory)/\(name)"
        guard truncate(path, 0) == 0 else { return }
        self.state.withLock { state in
            state.total -= state.sizes[name] ?? 0
            if state.sizes[name] != nil { state.sizes[name] = 0 }
        }
    }

    fileprivate enum WriteResult {
        case written
        case failed
        /// The body alone would pass the total.
        case noRoom
    }

    fileprivate func submit(_ job: @escaping @Sendable () -> Void) {
        self.lane.submit(job)
    }

    /// Claims room for `count` bytes waiting for the disk across every body; false when the
    /// disk is that far behind (the body is then cut, never the transfer slowed).
    fileprivate func reserve(_ count: Int) -> Bool {
        let after = self.unwritten.add(Int64(count), ordering: .relaxed).newValue
        guard after <= Self.unwrittenLimit else {
            self.unwritten.subtract(Int64(count), ordering: .relaxed)
            return false
        }
        return true
    }

    fileprivate func written(_ count: Int) {
        self.unwritten.subtract(Int64(count), ordering: .relaxed)
    }

    /// Lane only.
    private func makeDirectory() -> Bool {
        if self.state.withLock({ $0.madeDirectory }) { return true }
        do {
            try Files.makeDirectory(self.directory)
        } catch {
            return false
        }
        chmod(self.directory, 0o700)
        self.state.withLock { $0.madeDirectory = true }
        return true
    }
}

/// One body being kept: the task hands it each chunk as it passes (any thread), and it decides
/// what goes to the file (`BodyRecording`) and queues the write; the chunk itself goes on at once.
package final class BodyRecorder: Sendable {
    private let store: BodyStore
    private let name: String
    /// The recording and how many times it restarted: a write's completion counts for the
    /// recording it was queued for only.
    private let recording: Locked<(BodyRecording, generation: Int)>

    fileprivate init(store: BodyStore, name: String, recording: BodyRecording) {
        self.store = store
        self.name = name
        self.recording = Locked((recording, 0))
    }

    package func append(_ buffer: ByteBuffer) {
        let (keep, generation) = self.recording.withLock { ($0.0.arrived(buffer.readableBytes), $0.generation) }
        guard keep > 0, let slice = buffer.getSlice(at: buffer.readerIndex, length: keep) else { return }
        guard self.store.reserve(keep) else {
            return self.recording.withLock { recording in
                guard recording.generation == generation else { return recording.0.wroteBeforeRestart(keep) }
                recording.0.failed(unwritten: keep)
            }
        }
        self.store.submit {
            let result = self.store.write(slice, to: self.name)
            self.store.written(keep)
            self.recording.withLock { recording in
                guard recording.generation == generation else { return recording.0.wroteBeforeRestart(keep) }
                switch result {
                case .written: recording.0.wrote(keep)
                case .failed: recording.0.failed(unwritten: keep)
                case .noRoom: recording.0.failed(unwritten: keep)
                }
            }
        }
    }

    /// Starts the body again with `buffer` (a person replaced it at a hold): the file is emptied
    /// on the lane after the writes queued before, then `buffer` kept as any chunk.
    package func replace(with buffer: ByteBuffer) {
        self.recording.withLock { recording in
            recording.0.restart()
            recording.generation += 1
        }
        self.store.submit { self.store.empty(self.name) }
        self.append(buffer)
    }

    /// The body as recorded so far.
    package var recorded: RecordedBody {
        if self.store.wasRemoved(name: self.name) {
            self.recording.withLock { $0.0.removed() }
        }
        return self.recording.withLock { $0.0.body }
    }
}

extension BodyStore.State {
    fileprivate mutating func remember(removed name: String) {
        guard self.removed.insert(name).inserted else { return }
        self.removedOrder.append(name)
        if self.removedOrder.count > BodyStore.removedKept { self.removed.remove(self.removedOrder.removeFirst()) }
    }
}

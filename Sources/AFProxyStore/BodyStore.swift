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
        /// Bodies removed to keep the total, and bodies whose writes failed after their tasks'
        /// records were made: their recorders, and the records of their completed tasks, hear of
        /// it. The latest `removedKept` only (`changedOrder`), so that a daemon that records for
        /// months does not keep a name for every body it ever dropped.
        var changed: [String: Change] = [:]
        var changedOrder = CircularBuffer<String>()
        var madeDirectory = false
        /// The files of bodies being kept, open for their appends (lane only): opening and
        /// closing a file per chunk cost more than the write, and the lane fell behind a fast
        /// transfer (bodies cut by `disk`). Closed when the recorder goes, when the body is
        /// removed, and beyond `openKept` the oldest first.
        var open: [String: Int32] = [:]
        var openOrder = CircularBuffer<String>()
    }

    /// What became of a body the store no longer writes, which the record its task made when it
    /// completed may not say: writes still waiting for the disk then may fail after it.
    package enum Change: Sendable, Equatable {
        /// Removed to keep the total (`total`).
        case removed
        /// A write failed: the file holds the body's first `size` bytes, and nothing more goes to it.
        case failed(size: Int64)
    }

    package static let defaultMaxTotal: Int64 = 256 << 20
    /// How many removed bodies are remembered as removed (410 rather than 404).
    static let removedKept = 65536
    /// What may wait for the disk across every body: each body's own bound (`BodyRecording`)
    /// holds per body, and many small bodies at once would otherwise queue without end.
    package static let unwrittenLimit: Int64 = 64 << 20
    /// Files kept open at most: a body whose file was closed for another opens it again.
    static let openKept = 256
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

    /// The bodies' files open now.
    var openFiles: Int {
        self.state.withLock { $0.open.count }
    }

    /// Whether the body was removed to keep the total.
    package func wasRemoved(task: Int, side: BodySide) -> Bool {
        self.wasRemoved(name: Self.name(task: task, side: side))
    }

    fileprivate func wasRemoved(name: String) -> Bool {
        self.state.withLock { $0.changed[name] == .removed }
    }

    /// What became of the body since it was last written, if the store remembers it.
    package func change(task: Int, side: BodySide) -> Change? {
        self.state.withLock { $0.changed[Self.name(task: task, side: side)] }
    }

    /// Files a previous run left: the tasks they belonged to are gone with it.
    package func clear() {
        self.lane.submit {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: self.directory) else { return }
            for name in names where name.hasSuffix(".body") { unlink("\(self.directory)/\(name)") }
        }
    }

    private static func name(task: Int, side: BodySide) -> String { "\(task)-\(side.rawValue).body" }

    /// Lane only: appends `chunks` to the body's file, first removing the oldest bodies while the
    /// total would pass `maxTotal`. Answers how many of the bytes reached the file when not all did.
    fileprivate func write(_ chunks: [ByteBuffer], to name: String) -> WriteResult {
        let count = chunks.reduce(Int64(0)) { $0 + Int64($1.readableBytes) }
        guard self.makeDirectory() else { return .failed(landed: 0) }
        let fits = self.state.withLock { state -> Bool? in
            // Removed to keep the total: a write queued before would make it again with a tail.
            if state.changed[name] == .removed { return nil }
            while state.total + count > self.maxTotal, let index = state.order.firstIndex(where: { $0 != name }) {
                // The oldest, or the one after it when the oldest is the body written now.
                let oldest = state.order.remove(at: index)
                state.close(oldest)
                unlink("\(self.directory)/\(oldest)")
                state.total -= state.sizes.removeValue(forKey: oldest) ?? 0
                state.remember(oldest, .removed)
            }
            return state.total + count <= self.maxTotal
        }
        guard let fits else { return .removed }
        guard fits else { return .failed(landed: 0) }
        guard let fd = self.file(name) else { return .failed(landed: 0) }
        var landed: Int64 = 0
        var failed = false
        for chunk in chunks {
            var done = 0
            failed = chunk.withUnsafeReadableBytes { Files.writeAll(fd, $0, done: &done) } != nil
            landed += Int64(done)
            if failed { break }
        }
        // What a failed write made is kept: the file holds the start of the body either way, and
        // taking it back would free room that lets a later write land after a gap.
        self.state.withLock { state in
            if state.sizes[name] == nil { state.order.append(name) }
            state.sizes[name, default: 0] += landed
            state.total += landed
        }
        return failed ? .failed(landed: landed) : .written
    }

    /// Lane only: the body's file open for appending, opened (made) now when it is not.
    private func file(_ name: String) -> Int32? {
        if let fd = self.state.withLock({ $0.open[name] }) { return fd }
        let fd = open("\(self.directory)/\(name)", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        self.state.withLock { state in
            if state.openOrder.count >= Self.openKept, let oldest = state.openOrder.first { state.close(oldest) }
            state.open[name] = fd
            state.openOrder.append(name)
        }
        return fd
    }

    /// Lane only: the body is complete (its recorder went): its file is closed.
    fileprivate func close(_ name: String) {
        self.state.withLock { $0.close(name) }
    }

    /// Lane only: empties the body's file, its bytes out of the total.
    fileprivate func empty(_ name: String) {
        let path = "\(self.directory)/\(name)"
        guard truncate(path, 0) == 0 else { return }
        self.state.withLock { state in
            state.total -= state.sizes[name] ?? 0
            if state.sizes[name] != nil { state.sizes[name] = 0 }
            if case .failed = state.changed[name] { state.changed[name] = nil }
        }
    }

    /// Lane only: the body's writes failed and stopped with `size` bytes in its file.
    fileprivate func failed(_ name: String, size: Int64) {
        self.state.withLock { state in
            guard state.changed[name] != .removed else { return }
            state.remember(name, .failed(size: size))
        }
    }

    fileprivate enum WriteResult {
        case written
        /// The disk failed (or the body alone would pass the total) after `landed` bytes, the
        /// run's first, reached the file.
        case failed(landed: Int64)
        /// The body was removed to keep the total.
        case removed
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
/// Chunks queued while the lane is busy are written together by one job.
package final class BodyRecorder: Sendable {
    private let store: BodyStore
    private let name: String
    private let state: Locked<State>

    private struct State {
        var recording: BodyRecording
        /// How many times the recording restarted: a write counts for the recording it was
        /// queued for only.
        var generation = 0
        /// What waits for the lane, in order.
        var queued: [Queued] = []
        /// A job to write `queued` is on the lane.
        var draining = false
    }

    private enum Queued {
        case chunk(ByteBuffer, generation: Int)
        /// The file is emptied here (a restart).
        case empty
    }

    fileprivate init(store: BodyStore, name: String, recording: BodyRecording) {
        self.store = store
        self.name = name
        self.state = Locked(State(recording: recording))
    }

    deinit {
        let (store, name) = (self.store, self.name)
        store.submit { store.close(name) }
    }

    package func append(_ buffer: ByteBuffer) {
        let (keep, generation) = self.state.withLock { ($0.recording.arrived(buffer.readableBytes), $0.generation) }
        guard keep > 0, let slice = buffer.getSlice(at: buffer.readerIndex, length: keep) else { return }
        guard self.store.reserve(keep) else {
            return self.state.withLock { state in
                guard state.generation == generation else { return state.recording.wroteBeforeRestart(keep) }
                state.recording.refused(keep)
            }
        }
        self.enqueue(.chunk(slice, generation: generation))
    }

    /// Starts the body again with `buffer` (a person replaced it at a hold): the file is emptied
    /// on the lane after the writes queued before, then `buffer` kept as any chunk.
    package func replace(with buffer: ByteBuffer) {
        self.state.withLock { state in
            state.recording.restart()
            state.generation += 1
        }
        self.enqueue(.empty)
        self.append(buffer)
    }

    private func enqueue(_ item: Queued) {
        let start = self.state.withLock { state -> Bool in
            state.queued.append(item)
            defer { state.draining = true }
            return !state.draining
        }
        if start { self.store.submit { self.drain() } }
    }

    /// Lane only: writes what is queued, runs of chunks in one write job each, until none is left.
    private func drain() {
        while true {
            let items = self.state.withLock { state -> [Queued] in
                defer { state.queued.removeAll(keepingCapacity: true) }
                if state.queued.isEmpty { state.draining = false }
                return state.queued
            }
            guard !items.isEmpty else { return }
            var run: [(ByteBuffer, Int)] = []
            for item in items {
                switch item {
                case .chunk(let bytes, let generation):
                    run.append((bytes, generation))
                case .empty:
                    self.write(run)
                    run.removeAll()
                    self.store.empty(self.name)
                }
            }
            self.write(run)
        }
    }

    private func write(_ run: [(ByteBuffer, Int)]) {
        // After a failed write of this recording, nothing more goes to its file.
        let run = self.state.withLock { state in
            run.filter { bytes, generation in
                guard generation == state.generation, state.recording.writesFailed else { return true }
                self.store.written(bytes.readableBytes)
                state.recording.dropped(bytes.readableBytes)
                return false
            }
        }
        guard !run.isEmpty else { return }
        let result = self.store.write(run.map(\.0), to: self.name)
        var landed: Int64 = 0
        if case .failed(let count) = result { landed = count }
        for (bytes, generation) in run {
            let count = bytes.readableBytes
            self.store.written(count)
            self.state.withLock { state in
                guard state.generation == generation else { return state.recording.wroteBeforeRestart(count) }
                switch result {
                case .written: state.recording.wrote(count)
                case .failed:
                    let part = Int(min(Int64(count), landed))
                    landed -= Int64(part)
                    if part > 0 { state.recording.wrote(part) }
                    if part < count { state.recording.failed(unwritten: count - part) }
                case .removed:
                    state.recording.wroteBeforeRestart(count)  // no longer waiting, not in any file
                    state.recording.removed()
                }
            }
        }
        // The record its task made on completing may count bytes that were still waiting.
        if case .failed = result,
            let size = self.state.withLock({ $0.recording.writesFailed ? $0.recording.body.size : nil })
        {
            self.store.failed(self.name, size: size)
        }
    }

    /// The body as recorded so far.
    package var recorded: RecordedBody {
        if self.store.wasRemoved(name: self.name) {
            self.state.withLock { $0.recording.removed() }
        }
        return self.state.withLock { $0.recording.body }
    }
}

extension BodyStore.State {
    /// Closes the body's file if it is open.
    fileprivate mutating func close(_ name: String) {
        guard let fd = self.open.removeValue(forKey: name) else { return }
        Glibc.close(fd)
        if let index = self.openOrder.firstIndex(of: name) { self.openOrder.remove(at: index) }
    }

    fileprivate mutating func remember(_ name: String, _ change: BodyStore.Change) {
        guard self.changed.updateValue(change, forKey: name) == nil else { return }
        self.changedOrder.append(name)
        if self.changedOrder.count > BodyStore.removedKept { self.changed[self.changedOrder.removeFirst()] = nil }
    }
}

import AFProxyModel
import AFProxyStore
import AFProxyTransport
import FoundationEssentials
import NIOCore

/// A download task: a GET the daemon makes on its own behalf into a file, NSURLSession's
/// download task. It outlives what ends an HTTP task — a broken connection, a 5xx, a restart of
/// the daemon — by running one attempt (an `HTTPTransfer`) after another and continuing at
/// the offset reached when the origin proves the rest is of the same version.
///
/// What it decides lives in one `DownloadStateMachine` behind one lock; the actions it answers
/// are performed here, outside the lock (`perform(_:)`). Threads: the verbs and `record()` from
/// any thread; the transfer's reports on the session thread, which only copies body bytes and
/// hands them on; everything that touches the file on the task's `IOLane`, in order: preparing
/// it, each write, the end of an attempt (so that it sees every byte on disk), the naming by the
/// answer, the finishing (checksum, sync, rename) and the removal; retries after a timer on an event
/// loop.
/// A disk slower than the origin pauses the transfer (`DownloadStateMachine.unwrittenLimit`).
package final class DownloadTask: @unchecked Sendable {
    package let id: Int
    package let spec: DownloadSpec
    package let createdAt: Date
    /// The absolute path of the file to make, and whether the answer may still name it (a URL
    /// that names no file: its `Content-Disposition` then does, once).
    private let target: Locked<Target>

    private struct Target {
        var path: String
        var namedByAnswer: Bool
    }
    private let context: TaskContext
    /// What the download tasks share, and the one place it lives: the parking, the slots, the
    /// journal, the claimed paths, the security policy in force for the next attempt, the retry
    /// timers. Eight of its members, read while the task lives (a reload changes the policy), so
    /// the service itself rather than a copy or a closure per member. The cycle it makes with
    /// the registry ends when the task finishes or the daemon lets it go
    /// (`SessionManager.releaseLiveTasks`).
    private let downloads: DownloadService
    let machine: Locked<DownloadStateMachine>
    private let file: PartialFile
    /// The running attempt's transfer; a report from any other is stale and ignored.
    private let current = Locked<(any HTTPTransfer)?>(nil)
    private let recorded = Locked(Recorded())
    /// The retry timer waiting, if any, and a count bumped by each: a timer that is no longer
    /// the latest does nothing (its cancel may come after it fired).
    private let retryTimer = Locked(RetryTimer())

    private struct RetryTimer {
        var generation = 0
        var scheduled: Scheduled<Void>?
    }
    /// Lane only: when progress was last written to the journal.
    private var lastPersisted = ContinuousClock.now
    /// Where the file work runs, one job after another.
    private let lane = IOExecutor.shared.lane()
    /// A new download: a partial file left by an earlier one of this path is of unknown origin,
    /// emptied before the first attempt.
    private let discardsPartial: Bool

    private struct Recorded {
        var head: ProxyResponseHead?
        var failure: TaskFailure?
        var metrics = TaskMetrics()
        var completedAt: Date?
    }

    init(
        id: Int, spec: DownloadSpec, path: String, partialPath: String? = nil, namedByAnswer: Bool = false,
        createdAt: Date, machine: DownloadStateMachine, context: TaskContext, downloads: DownloadService,
        discardsPartial: Bool = false
    ) {
        self.discardsPartial = discardsPartial
        self.id = id
        self.spec = spec
        self.target = Locked(Target(path: path, namedByAnswer: namedByAnswer))
        self.createdAt = createdAt
        self.machine = Locked(machine)
        self.context = context
        self.downloads = downloads
        self.file = PartialFile(target: path, path: partialPath)
    }

    package var path: String { self.target.withLock { $0.path } }

    package var state: TaskState { self.machine.withLock { $0.state } }
    package var kind: TaskKind { .download }
    package var bytesUp: Int64 { 0 }
    package var bytesDown: Int64 { self.machine.withLock { $0.offset } }

    /// Queues the task (or leaves it suspended): once registered, after `created` was published.
    /// A new download's partial file is emptied first, on the lane.
    func start() {
        guard self.discardsPartial else { return self.perform(self.machine.withLock { $0.start() }) }
        self.lane.submit { [self] in
            do throws(TaskFailure) {
                try PartialFile.failure { () throws(FileError) in
                    try self.file.truncate()
                    self.file.close()
                }
            } catch {
                return self.perform(self.machine.withLock { $0.preparationFailed(error) }, onLane: true)
            }
            self.perform(self.machine.withLock { $0.start() }, onLane: true)
        }
    }

    func slotGranted() {
        self.perform(self.machine.withLock { $0.slotGranted() })
    }

    /// The network went away or came back (only for a destination that is not this machine).
    func networkLost() {
        self.perform(self.machine.withLock { $0.networkLost() })
    }

    func networkRestored() {
        self.perform(self.machine.withLock { $0.networkRestored() })
    }

    /// The download's origin is this machine: the network's state does not concern it.
    var isLoopback: Bool {
        LoopbackHost.host(ofURL: self.spec.url).map(LoopbackHost.contains) ?? false
    }

    package func record() -> TaskRecord {
        let now = ContinuousClock.now
        let (machine, waiting) = self.machine.withLock { ($0, $0.waiting(now: now)) }
        let recorded = self.recorded.withLock { $0 }
        let attempt = min(machine.failuresInARow + 1, machine.policy.maxAttempts)
        var record = TaskRecord(
            id: self.id, kind: .download, state: machine.state, method: "GET", url: self.spec.url,
            client: self.spec.client, createdAt: self.createdAt, status: recorded.head?.status,
            // The machine's, not `recorded`'s: it is set with the state, where `.finish` records it
            // only after the machine said completed (a record read in between showed a
            // checksum mismatch completed with no error).
            error: machine.endFailure?.message, errorCode: machine.endFailure?.code,
            upload: TransferProgress(completed: 0, total: 0),
            download: TransferProgress(completed: machine.offset, total: machine.total),
            metrics: recorded.metrics, requestHeaders: self.spec.headers, responseHeaders: recorded.head?.headers,
            waiting: waiting, resumes: machine.resumes,
            limit: self.context.throttler.limit(task: self.id, host: LoopbackHost.host(ofURL: self.spec.url) ?? ""),
            heldBy: machine.heldBy)
        record.file = DownloadFile(
            path: self.path, sha256: self.spec.sha256, keepPartial: self.spec.keepPartial, attempt: attempt,
            maxAttempts: machine.policy.maxAttempts, lastError: machine.lastError, restarts: machine.restarts,
            insecure: self.spec.insecure, pins: self.spec.pins)
        record.file?.partialPath = self.file.path
        return record
    }

    /// What the journal keeps of the task now.
    func entry() -> DownloadEntry {
        let machine = self.machine.withLock { $0 }
        let recorded = self.recorded.withLock { $0 }
        return DownloadEntry(
            id: self.id, url: self.spec.url, headers: self.spec.headers, path: self.path,
            partialPath: self.file.path, namedByAnswer: self.target.withLock { $0.namedByAnswer },
            sha256: self.spec.sha256, keepPartial: self.spec.keepPartial, insecure: self.spec.insecure,
            pins: self.spec.pins, createdAt: self.createdAt, state: machine.state,
            validator: machine.validator, total: machine.total, offset: machine.offset,
            failuresInARow: machine.failuresInARow, lastError: machine.lastError, resumes: machine.resumes,
            restarts: machine.restarts, status: recorded.head?.status, responseHeaders: recorded.head?.headers,
            error: recorded.failure?.message, errorCode: recorded.failure?.code, completedAt: recorded.completedAt,
            heldBy: machine.heldBy)
    }

    // MARK: actions

    /// Carries out what the machine decided, in order; never called with its lock held. From the
    /// first action that touches the file on, the rest runs on the lane (`onLane`: already there),
    /// after the file work queued before it.
    func perform(_ actions: [DownloadStateMachine.Action]) {
        self.perform(actions, onLane: false)
    }

    private func perform(_ actions: [DownloadStateMachine.Action], onLane: Bool) {
        guard !self.downloads.isParked else { return }
        for (index, action) in actions.enumerated() {
            if !onLane && action.touchesFile {
                let rest = Array(actions[index...])
                // The record says how it ended from now on, as the verb's answer shows it.
                for case .finish(let failure, _) in rest { self.recordEnd(failure) }
                self.lane.submit { [self] in self.perform(rest, onLane: true) }
                return
            }
            switch action {
            case .startTransfer(let range):
                self.startTransfer(range: range)
            case .abortTransfer:
                if let transfer = self.current.withLock({ $0 }) {
                    transfer.cancel(reason: .canceled("attempt stopped"))
                }
            case .truncateFile:
                do throws(TaskFailure) {
                    try PartialFile.failure { () throws(FileError) in try self.file.truncate() }
                } catch {
                    self.perform(self.machine.withLock { $0.fileFailed(error) }, onLane: true)
                }
            case .scheduleRetry(let delay):
                self.scheduleRetry(after: delay)
            case .enqueue:
                self.downloads.scheduler.enqueue(self)
            case .releaseSlot:
                self.downloads.scheduler.release()
            case .finalize:
                let (total, sha256) = (self.machine.withLock { $0.total }, self.spec.sha256)
                self.file.target = self.path
                do throws(TaskFailure) {
                    // The machine's lock orders the rename against a cancel; the rename itself
                    // runs outside it (a cancel then answers 409 at once, not later).
                    try self.file.finish(length: total, sha256: sha256) {
                        self.machine.withLock { $0.renameDue() }
                    }
                    self.perform(self.machine.withLock { $0.finalized(nil) }, onLane: true)
                } catch {
                    self.perform(self.machine.withLock { $0.finalized(error) }, onLane: true)
                }
            case .publishResumedAtOffset:
                self.context.events.publish(.resumedAtOffset, self.record())
            case .publishSuspended:
                self.context.events.publish(.suspended, self.record())
            case .publishResumed:
                self.context.events.publish(.resumed, self.record())
            case .finish(let failure, let removePartial):
                self.cancelRetry()
                self.recordEnd(failure)
                if removePartial { self.file.remove() } else { self.file.close() }
                self.downloads.finished(self)
                self.context.completed(self)
            case .persist:
                self.downloads.journal?.update(self.entry())
            case .continueReceiving:
                if let transfer = self.current.withLock({ $0 }) { transfer.continueReceiving() }
            }
        }
    }

    /// A timer on an event loop, not a sleeping thread or Swift task: what it runs only queues
    /// the download. The machine ignores a retry that is no longer due (suspended, canceled).
    private func scheduleRetry(after delay: Duration) {
        let previous = self.retryTimer.withLock { timer in
            timer.generation += 1
            defer { timer.scheduled = nil }
            return timer.scheduled
        }
        previous?.cancel()
        let generation = self.retryTimer.withLock { $0.generation }
        let scheduled = self.downloads.schedule(after: delay) { [weak self] in
            guard let self, self.retryTimer.withLock({ $0.generation }) == generation else { return }
            self.retryTimer.withLock { $0.scheduled = nil }
            self.perform(self.machine.withLock { $0.retryDue() })
        }
        self.retryTimer.withLock { timer in
            if timer.generation == generation { timer.scheduled = scheduled }
        }
    }

    /// The task ended: a timer still waiting lets it go now rather than at its deadline.
    private func cancelRetry() {
        let scheduled = self.retryTimer.withLock { timer in
            timer.generation += 1
            defer { timer.scheduled = nil }
            return timer.scheduled
        }
        scheduled?.cancel()
    }

    private func recordEnd(_ failure: TaskFailure?) {
        self.recorded.withLock { recorded in
            guard recorded.completedAt == nil else { return }
            recorded.failure = failure
            recorded.completedAt = Date()
        }
    }

    private func startTransfer(range: DownloadStateMachine.RangeRequest?) {
        var headers = self.spec.headers
        if headers.first("user-agent") == nil {
            headers.append(HTTPHeaderField("User-Agent", self.downloads.settings.userAgent))
        }
        if let range {
            headers.append(HTTPHeaderField("Range", "bytes=\(range.offset)-"))
            headers.append(HTTPHeaderField("If-Range", range.ifRange))
        }
        let request = ProxyRequest(method: "GET", url: self.spec.url, headers: headers, body: .none, client: "afproxy")
        let transfer = self.context.transport.makeTransfer(
            TransferRequest(
                request: request, options: self.downloads.transferOptions(for: self.spec),
                destinations: self.context.destinations(),
                throttle: self.context.throttleTicket(
                    task: self.id, host: LoopbackHost.host(ofURL: self.spec.url) ?? "")
            ),
            delegate: self)
        self.current.withLock { $0 = transfer }
        transfer.start()
    }

    private func isCurrent(_ transfer: any HTTPTransfer) -> Bool {
        self.current.withLock { $0 === transfer }
    }
}

// MARK: - ManagedTask (any thread)

extension DownloadTask: MachineDrivenTask {}

// MARK: - HTTPTransferDelegate (the session thread)

extension DownloadTask: HTTPTransferDelegate {
    package func transfer(_ transfer: any HTTPTransfer, didReceiveInterim head: ProxyResponseHead) {}

    /// A download's end is curl's completion: the file is checked and renamed then.
    package func transferDidReceiveWholeBody(_ transfer: any HTTPTransfer) {}

    package func transfer(_ transfer: any HTTPTransfer, didReceive head: ProxyResponseHead, metrics: TaskMetrics) {
        guard self.isCurrent(transfer) else { return }
        var metrics = metrics
        metrics.totalMs = nil
        self.recorded.withLock { recorded in
            recorded.head = head
            recorded.metrics = metrics
        }
        self.perform(self.machine.withLock { $0.headReceived(head, now: Date()) })
        if (200..<300).contains(head.status) { self.lane.submit { [self] in self.takeName(from: head) } }
    }

    /// A URL that names no file: the first successful answer's `Content-Disposition` names it,
    /// in the same directory, unless that name is taken (then the provisional one stays). On the
    /// lane: it renames the partial file.
    private func takeName(from head: ProxyResponseHead) {
        let (path, open) = self.target.withLock { ($0.path, $0.namedByAnswer) }
        guard open else { return }
        self.target.withLock { $0.namedByAnswer = false }
        guard let name = head.headers.first("content-disposition").flatMap(ContentDisposition.fileName) else { return }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
        let named = directory + "/" + name
        guard named != path, DownloadTarget.refusal(for: named, force: false, writableHint: nil) == nil,
            PartialFile.length(of: named + ".afpart") == nil, self.downloads.move(path, to: named)
        else { return }
        do throws(FileError) {
            try self.file.retarget(named)
        } catch {
            _ = self.downloads.move(named, to: path)
            return
        }
        self.target.withLock { $0.path = named }
        self.downloads.journal?.update(self.entry())
    }

    package func transfer(
        _ transfer: any HTTPTransfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer
    ) -> BodyReceipt {
        // Bytes of an attempt being stopped are dropped: it ends without them.
        guard self.isCurrent(transfer), !self.downloads.isParked,
            let (offset, pause) = self.machine.withLock({ $0.bodyArrived(bytes.count) })
        else { return .taken }
        let chunk = [UInt8](bytes)
        self.lane.submit { [self] in self.write(chunk, at: offset) }
        return pause ? .takenWindowFull : .taken
    }

    /// On the lane: one chunk into the partial file, unless a cancel or a failed write came since.
    private func write(_ chunk: [UInt8], at offset: Int64) {
        // Parked: the journal keeps the task as it is; the next start continues at the file's length.
        guard !self.downloads.isParked else { return }
        guard self.machine.withLock({ $0.isWriteDue }) else {
            return self.perform(self.machine.withLock { $0.bodyDropped(chunk.count) }, onLane: true)
        }
        Failpoints.waitOutDiskStall(beside: self.file.path)
        do throws(TaskFailure) {
            try PartialFile.failure { () throws(FileError) in try self.file.write(chunk, at: offset) }
        } catch {
            let actions = self.machine.withLock { machine in
                machine.bodyDropped(chunk.count) + machine.fileFailed(error)
            }
            return self.perform(actions, onLane: true)
        }
        self.perform(self.machine.withLock { $0.bodyWritten(chunk.count) }, onLane: true)
        let now = ContinuousClock.now
        if now - self.lastPersisted >= .seconds(1) {
            self.lastPersisted = now
            self.downloads.journal?.update(self.entry())
        }
    }

    package func transfer(
        _ transfer: any HTTPTransfer, fillRequestBody buffer: UnsafeMutableRawBufferPointer
    ) -> RequestBodyRead {
        .end
    }

    package func transferRewindRequestBody(_ transfer: any HTTPTransfer) -> Bool { true }

    package func transferDidFlush(_ transfer: any HTTPTransfer) {}

    package func transfer(_ transfer: any HTTPTransfer, didCompleteWith result: UpstreamResult, metrics: TaskMetrics) {
        guard self.isCurrent(transfer) else { return }
        self.current.withLock { $0 = nil }
        self.recorded.withLock { $0.metrics = metrics }
        let failure: TaskFailure?
        switch result {
        case .success: failure = nil
        case .failure(let reason): failure = reason
        }
        // After the bytes still on their way to the file: what follows (a retry at the offset
        // reached, the checksum) sees every one of them there.
        self.lane.submit { [self] in
            self.perform(self.machine.withLock { $0.transferEnded(failure, now: .now) }, onLane: true)
        }
    }
}

extension DownloadStateMachine.Action {
    /// Runs on the task's lane, in order with the writes: it touches the file.
    fileprivate var touchesFile: Bool {
        switch self {
        case .truncateFile, .finalize, .finish: true
        default: false
        }
    }
}

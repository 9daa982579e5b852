import AFProxyModel
import FoundationEssentials

/// Everything a download task decides, as one plain value: its state (the four every task has),
/// where it is in its life (queued for a slot, an attempt running, waiting out a backoff,
/// finishing the file), how far the partial file got, which version of the resource those bytes
/// belong to, and how many attempts in a row moved nothing. `DownloadTask` feeds it every event
/// under one lock — the verbs, the transfer's head and end, the scheduler, the timer, the file —
/// and performs the actions it answers, in order.
///
/// It is NSURLSession's download task: a broken-off transfer continues at the offset reached
/// (`didResumeAtOffset`, here `resumes` and `publishResume`) when the origin proves the rest
/// belongs to the same version (a 206 from that offset, the validator unchanged); anything else
/// starts again from 0 and says why, so bytes of two versions are never joined.
package struct DownloadStateMachine: Sendable {
    package struct Policy: Sendable, Equatable {
        /// `download-retries`: attempts in a row that may move nothing before the task fails.
        package var maxAttempts: Int
        package var firstBackoff: Duration
        package var maxBackoff: Duration

        package init(maxAttempts: Int = 10, firstBackoff: Duration = .seconds(1), maxBackoff: Duration = .seconds(60)) {
            self.maxAttempts = max(1, maxAttempts)
            self.firstBackoff = firstBackoff
            self.maxBackoff = maxBackoff
        }

        /// Before the attempt that follows `failures` attempts in a row that moved nothing: the
        /// first backoff, doubling, capped.
        package func backoff(after failures: Int) -> Duration {
            var delay = self.firstBackoff
            for _ in 1..<max(1, failures) {
                delay *= 2
                if delay >= self.maxBackoff { return self.maxBackoff }
            }
            return min(delay, self.maxBackoff)
        }
    }

    package enum Phase: Sendable, Equatable {
        /// Wants a slot (`max-active-downloads`).
        case queued
        /// A transfer runs.
        case attempting(Attempt)
        /// Waits until `until` before the next attempt.
        case backingOff(until: ContinuousClock.Instant)
        /// Suspended: no transfer, no timer, no slot.
        case idle
        /// The network is gone: no attempt, no retry spent, until it returns.
        case waitingForNetwork
        /// The body is complete: the file is checked and synced. A cancel now still wins: the
        /// file is not renamed (`renameDue`).
        case finishing
        /// The file is being renamed into place: too late for a cancel, which is refused.
        case renaming
        case ended
    }

    package struct Attempt: Sendable, Equatable {
        /// The offset this attempt asked the body to start at (0: the whole resource).
        package var from: Int64
        /// Bytes this attempt wrote.
        package var moved: Int64 = 0
        /// The head was accepted: body bytes go to the file.
        package var accepting = false
        /// Why this attempt is being aborted; what follows its end.
        package var abort: Abort?
    }

    package enum Abort: Sendable, Equatable {
        /// Start again from 0 at once.
        case restart
        /// The origin asked for time (5xx, 429): retry after a backoff, at least `minimum`.
        case retry(TaskFailure, minimum: Duration?)
        case fail(TaskFailure)
        /// A verb (suspend, cancel) stopped it: the state says what follows.
        case verb
        /// The network went away: wait for it.
        case network
    }

    package struct RangeRequest: Sendable, Equatable {
        package var offset: Int64
        /// The validator the rest must match (`If-Range`).
        package var ifRange: String

        package init(offset: Int64, ifRange: String) {
            self.offset = offset
            self.ifRange = ifRange
        }
    }

    package enum Action: Sendable, Equatable {
        /// Start a transfer; with `range`, ask for the rest (`Range: bytes=N-`, `If-Range`).
        case startTransfer(range: RangeRequest?)
        /// Abort the running transfer; `transferEnded` follows.
        case abortTransfer
        /// Empty the partial file: its bytes are of another version, or cannot be trusted.
        case truncateFile
        /// Call `retryDue` after this long.
        case scheduleRetry(Duration)
        /// Ask the scheduler for a slot; it calls `slotGranted`.
        case enqueue
        /// Give the slot back to the scheduler.
        case releaseSlot
        /// Check the length and the checksum, sync, ask `renameDue`, rename if it agrees; report
        /// with `finalized`.
        case finalize
        case publishResumedAtOffset
        case publishSuspended
        case publishResumed
        /// Record the end and publish `completed`; remove the partial file when told.
        case finish(TaskFailure?, removePartial: Bool)
        /// A change worth writing to the store at once.
        case persist
        /// The writer caught up: the transfer that paused for it receives again.
        case continueReceiving
    }

    /// Bytes handed to the writer and not yet in the file above which the transfer pauses: what
    /// a download holds in memory while its disk is slow, and all a stalled disk costs.
    package static let unwrittenLimit = 4 << 20
    /// The transfer paused for the writer receives again once no more than this is unwritten.
    package static let unwrittenResume = 1 << 20

    package let policy: Policy
    package let keepPartial: Bool
    package private(set) var state: TaskState
    package private(set) var phase: Phase
    /// Bytes in the partial file.
    package private(set) var offset: Int64
    /// The complete length, once an answer told it.
    package private(set) var total: Int64?
    /// The version the partial file's bytes belong to.
    package private(set) var validator: ResourceValidator?
    /// Attempts in a row that moved no byte.
    package private(set) var failuresInARow: Int
    package private(set) var lastError: String?
    package private(set) var resumes: [TaskResume]
    package private(set) var restarts: [DownloadFile.Restart]
    /// The hold rule that created the task suspended, until a person resumes it.
    package private(set) var heldBy: Int?
    /// What a cancel ended the task with.
    private var cancelFailure: TaskFailure?
    /// What the task ended with, once `state` is completed (nil: it succeeded). Set with the
    /// state, so that a record never shows a failed task completed without its failure.
    package private(set) var endFailure: TaskFailure?
    /// The network is unreachable (and the destination is not this machine).
    package private(set) var networkDown = false
    /// Body bytes handed to the writer and not yet in the file (`bodyArrived`, `bodyWritten`).
    package private(set) var unwritten = 0
    /// The transfer is paused until the writer is down to `unwrittenResume`.
    package private(set) var waitingForDisk = false

    /// A new download, or one restored from the store: `offset` is the partial file's length,
    /// `state` running or suspended. `heldBy`: the hold rule that caught it, which makes it
    /// suspended. Call `start()` next.
    package init(
        policy: Policy, keepPartial: Bool = false, state: TaskState = .running, offset: Int64 = 0,
        total: Int64? = nil, validator: ResourceValidator? = nil, failuresInARow: Int = 0,
        resumes: [TaskResume] = [], restarts: [DownloadFile.Restart] = [], heldBy: Int? = nil
    ) {
        self.policy = policy
        self.keepPartial = keepPartial
        self.state = state == .suspended || heldBy != nil ? .suspended : .running
        self.heldBy = heldBy
        self.phase = .idle
        self.offset = offset
        self.total = total
        self.validator = validator
        self.failuresInARow = failuresInARow
        self.resumes = resumes
        self.restarts = restarts
    }

    /// Why a running download moves no bytes now, for a person; nil while it does or may.
    package func waiting(now: ContinuousClock.Instant) -> String? {
        guard self.state == .running else { return nil }
        switch self.phase {
        case .queued:
            return "queued"
        case .attempting where self.waitingForDisk:
            return "waiting for the disk (\(self.unwritten >> 10) KiB not yet written)"
        case .waitingForNetwork:
            return "waiting for network"
        case .backingOff(let until):
            let seconds = max(0, Int(((until - now) / .seconds(1)).rounded(.up)))
            let why = self.lastError.map { ": \($0)" } ?? ""
            return "retrying in \(seconds) s (attempt \(self.failuresInARow + 1) of \(self.policy.maxAttempts)\(why))"
        default:
            return nil
        }
    }

    /// Whether body bytes now go to the file.
    package var isAccepting: Bool {
        guard self.state == .running, case .attempting(let attempt) = self.phase else { return false }
        return attempt.accepting && attempt.abort == nil
    }

    // MARK: life

    package mutating func start() -> [Action] {
        guard self.phase == .idle, self.state == .running else { return [] }
        self.phase = .queued
        return [.enqueue]
    }

    package mutating func slotGranted() -> [Action] {
        guard self.state == .running, self.phase == .queued else { return [.releaseSlot] }
        if self.networkDown {
            self.phase = .waitingForNetwork
            return [.releaseSlot]
        }
        return self.beginAttempt()
    }

    package mutating func retryDue() -> [Action] {
        guard self.state == .running, case .backingOff = self.phase else { return [] }
        self.phase = self.networkDown ? .waitingForNetwork : .queued
        return self.networkDown ? [] : [.enqueue]
    }

    /// The final head of the current attempt.
    package mutating func headReceived(_ head: ProxyResponseHead, now: Date) -> [Action] {
        guard self.state == .running, case .attempting(var attempt) = self.phase, attempt.abort == nil else {
            return []
        }
        defer { self.phase = .attempting(attempt) }
        let answered = "the origin answered \(head.status)" + (head.reason.isEmpty ? "" : " \(head.reason)")
        switch head.status {
        case 206:
            guard let range = head.headers.first("content-range").flatMap(ContentRange.init) else {
                attempt.abort = .fail(.badResponse("\(answered) without a Content-Range of one byte range"))
                return [.abortTransfer]
            }
            guard attempt.from > 0 else {
                guard range.first == 0 else {
                    attempt.abort = .fail(.badResponse("\(answered) for bytes from \(range.first), asked for all"))
                    return [.abortTransfer]
                }
                attempt.accepting = true
                self.validator = ResourceValidator(headers: head.headers)
                self.total = range.completeLength
                return [.persist]
            }
            if let reason = self.mismatch(range, head, from: attempt.from) {
                self.restarts.append(.init(at: now, reason: reason))
                attempt.abort = .restart
                return [.abortTransfer]
            }
            attempt.accepting = true
            if let length = range.completeLength { self.total = length }
            self.resumes.append(TaskResume(offset: attempt.from, at: now))
            return [.publishResumedAtOffset, .persist]
        case 416:
            guard attempt.from > 0 else {
                attempt.abort = .fail(.httpError("\(answered) to a request for the whole resource"))
                return [.abortTransfer]
            }
            self.restarts.append(.init(at: now, reason: "\(answered): the rest from \(attempt.from) is not there"))
            attempt.abort = .restart
            return [.abortTransfer]
        case 200...299:
            var actions: [Action] = []
            if attempt.from > 0 {
                // The whole resource instead of the rest: the validator changed or the origin
                // ignores ranges. This answer is a fresh start; take it.
                let reason =
                    ResourceValidator(headers: head.headers) == self.validator
                    ? "\(answered) with the whole resource instead of the rest from \(attempt.from)"
                    : "the resource changed: \(answered) with a new version"
                self.restarts.append(.init(at: now, reason: reason))
                attempt.from = 0
                self.offset = 0
                actions.append(.truncateFile)
            }
            attempt.accepting = true
            self.validator = ResourceValidator(headers: head.headers)
            self.total = head.contentLength
            return actions + [.persist]
        case 429, 500...599:
            let minimum = head.headers.first("retry-after").flatMap {
                RetryAfter.delay($0, now: Int(now.timeIntervalSince1970))
            }
            attempt.abort = .retry(.httpError(answered), minimum: minimum)
            return [.abortTransfer]
        default:
            attempt.abort = .fail(.httpError(answered))
            return [.abortTransfer]
        }
    }

    /// Why a 206 cannot continue the partial file, or nil when it can.
    private func mismatch(_ range: ContentRange, _ head: ProxyResponseHead, from offset: Int64) -> String? {
        if range.first != offset {
            return "the origin sent bytes from \(range.first) when asked for the rest from \(offset)"
        }
        if let validator = self.validator, !validator.matches(head.headers) {
            return "the resource changed: its validator is no longer \(validator.ifRange)"
        }
        if let total = self.total, let length = range.completeLength, total != length {
            return "the resource changed: its length went from \(total) to \(length)"
        }
        return nil
    }

    /// Body bytes arrived: where in the file they go (after the bytes still on their way to it),
    /// and whether the transfer must pause until the writer catches up; nil when they do not go
    /// to the file (the attempt is being stopped, the task suspended).
    package mutating func bodyArrived(_ count: Int) -> (offset: Int64, pause: Bool)? {
        guard self.isAccepting else { return nil }
        let offset = self.offset + Int64(self.unwritten)
        self.unwritten += count
        if self.unwritten >= Self.unwrittenLimit { self.waitingForDisk = true }
        return (offset, self.waitingForDisk)
    }

    /// Whether bytes that arrived are still to be written: not once the task is being canceled
    /// (a cancel discards what is queued) or a write failed (a hole would follow).
    package var isWriteDue: Bool {
        guard self.state != .canceling, case .attempting(let attempt) = self.phase else { return false }
        if case .fail = attempt.abort { return false }
        return true
    }

    /// Body bytes went to the file. Answers `continueReceiving` only to bytes that arrived while
    /// the transfer waited for the disk, hence discardable where none did.
    @discardableResult
    package mutating func bodyWritten(_ count: Int) -> [Action] {
        if case .attempting(var attempt) = self.phase {
            attempt.moved += Int64(count)
            self.offset += Int64(count)
            self.phase = .attempting(attempt)
        }
        return self.writerCaughtUp(count)
    }

    /// Body bytes that arrived were not written (`isWriteDue` said no, or the write failed).
    package mutating func bodyDropped(_ count: Int) -> [Action] {
        self.writerCaughtUp(count)
    }

    private mutating func writerCaughtUp(_ count: Int) -> [Action] {
        self.unwritten = max(0, self.unwritten - count)
        guard self.waitingForDisk, self.unwritten <= Self.unwrittenResume else { return [] }
        self.waitingForDisk = false
        return [.continueReceiving]
    }

    /// The partial file could not be prepared for a new download: it ends with that failure.
    package mutating func preparationFailed(_ failure: TaskFailure) -> [Action] {
        guard self.state != .completed else { return [] }
        return self.end(failure, removePartial: false)
    }

    /// The file could not take the bytes (no space, an I/O error): the task fails.
    package mutating func fileFailed(_ failure: TaskFailure) -> [Action] {
        guard case .attempting(var attempt) = self.phase, attempt.abort == nil else { return [] }
        attempt.abort = .fail(failure)
        self.phase = .attempting(attempt)
        return [.abortTransfer]
    }

    /// The current attempt's transfer ended: `failure` nil when curl completed it.
    package mutating func transferEnded(_ failure: TaskFailure?, now: ContinuousClock.Instant) -> [Action] {
        guard case .attempting(let attempt) = self.phase else { return [] }
        self.waitingForDisk = false
        switch self.state {
        case .canceling:
            return self.end(self.cancelFailure ?? .canceled(), removePartial: !self.keepPartial)
        case .suspended:
            self.phase = .idle
            return [.releaseSlot, .persist]
        case .completed:
            return []
        case .running:
            break
        }
        if self.networkDown && attempt.abort != .restart {
            // Whatever ended the attempt, it was not its fault: no retry is spent.
            self.phase = .waitingForNetwork
            return [.releaseSlot, .persist]
        }
        switch attempt.abort {
        case .restart:
            self.offset = 0
            return [.truncateFile] + self.beginAttempt()
        case .retry(let failure, let minimum):
            return self.retry(after: failure, moved: attempt.moved, minimum: minimum, now: now)
        case .fail(let failure):
            return self.end(failure, removePartial: !self.keepPartial)
        case .verb, .network:
            return []
        case nil:
            break
        }
        if let failure {
            guard failure.isRetryable else { return self.end(failure, removePartial: !self.keepPartial) }
            return self.retry(after: failure, moved: attempt.moved, minimum: nil, now: now)
        }
        if let total = self.total, self.offset != total {
            guard self.offset < total else {
                return self.end(
                    .lengthMismatch("the origin sent \(self.offset) bytes of an announced \(total)"),
                    removePartial: !self.keepPartial)
            }
            let broken = TaskFailure.upstreamBroken("the body ended at \(self.offset) of \(total) bytes")
            return self.retry(after: broken, moved: attempt.moved, minimum: nil, now: now)
        }
        self.phase = .finishing
        return [.finalize]
    }

    /// The file was checked and synced: whether to rename it into place now. This is where a
    /// cancel and the completion are ordered, under the machine's one lock: a cancel that came
    /// before wins (false: no rename, `finalized` ends the task canceled and the final name never
    /// appears); from here on a cancel loses, refused, and the task completes with the file.
    package mutating func renameDue() -> Bool {
        guard self.phase == .finishing, self.state != .canceling else { return false }
        self.phase = .renaming
        return true
    }

    /// The finishing step is over: the file was renamed into place (`failure` nil), or not
    /// (its check failed, or a cancel came before `renameDue`).
    package mutating func finalized(_ failure: TaskFailure?) -> [Action] {
        switch self.phase {
        case .finishing where self.state == .canceling:
            return self.end(self.cancelFailure ?? .canceled(), removePartial: !self.keepPartial)
        case .finishing, .renaming:
            return self.end(failure, removePartial: failure != nil && !self.keepPartial)
        default:
            return []
        }
    }

    // MARK: the network

    /// The network went away: a running attempt stops, a queued or retrying download waits,
    /// until `networkRestored`.
    package mutating func networkLost() -> [Action] {
        guard !self.networkDown else { return [] }
        self.networkDown = true
        guard self.state == .running else { return [] }
        switch self.phase {
        case .attempting(var attempt):
            attempt.abort = attempt.abort ?? .network
            self.phase = .attempting(attempt)
            return [.abortTransfer]
        case .queued, .backingOff:
            self.phase = .waitingForNetwork
            return []
        default:
            return []
        }
    }

    /// The network is back: a waiting download queues for its next attempt at once, with its
    /// count of failed attempts as it was.
    package mutating func networkRestored() -> [Action] {
        guard self.networkDown else { return [] }
        self.networkDown = false
        guard self.state == .running, self.phase == .waitingForNetwork else { return [] }
        self.phase = .queued
        return [.enqueue]
    }

    // MARK: verbs

    package mutating func suspend() throws(IllegalTransition) -> [Action] {
        try self.state.apply(.suspend)
        switch self.phase {
        case .attempting(var attempt):
            attempt.abort = attempt.abort ?? .verb
            self.phase = .attempting(attempt)
            return [.abortTransfer, .publishSuspended]
        case .queued, .backingOff, .waitingForNetwork:
            self.phase = .idle
            return [.publishSuspended, .persist]
        case .idle, .finishing, .renaming, .ended:
            return [.publishSuspended, .persist]
        }
    }

    package mutating func resume() throws(IllegalTransition) -> [Action] {
        try self.state.apply(.resume)
        self.heldBy = nil  // released: the `resumed` record and the journal say so
        self.failuresInARow = 0
        guard self.phase == .idle else { return [.publishResumed] }
        guard !self.networkDown else {
            self.phase = .waitingForNetwork
            return [.publishResumed, .persist]
        }
        self.phase = .queued
        return [.publishResumed, .enqueue, .persist]
    }

    package mutating func cancel(_ failure: TaskFailure) throws(IllegalTransition) -> [Action] {
        if self.phase == .renaming {
            throw IllegalTransition(
                verb: "cancel", state: self.state, reason: "the file is complete and being renamed into place")
        }
        try self.state.apply(.cancel)
        self.cancelFailure = failure
        switch self.phase {
        case .attempting(var attempt):
            attempt.abort = .verb
            self.phase = .attempting(attempt)
            return [.abortTransfer]
        case .queued, .backingOff, .idle, .waitingForNetwork:
            return self.end(failure, removePartial: !self.keepPartial)
        case .finishing:
            // The file is being checked: `renameDue` answers no, and `finalized` ends it canceled.
            return []
        case .renaming, .ended:
            return []
        }
    }

    // MARK: -

    private mutating func beginAttempt() -> [Action] {
        if self.offset > 0, let total = self.total, self.offset == total {
            // The bytes all arrived before (a restart between the last byte and the rename).
            self.phase = .finishing
            return [.finalize]
        }
        if self.offset > 0, let validator = self.validator {
            self.phase = .attempting(Attempt(from: self.offset))
            return [.startTransfer(range: RangeRequest(offset: self.offset, ifRange: validator.ifRange))]
        }
        var actions: [Action] = []
        if self.offset > 0 {
            self.restarts.append(
                .init(
                    at: Date(),
                    reason: "no validator (strong ETag or Last-Modified) to resume \(self.offset) bytes with"))
            self.offset = 0
            actions.append(.truncateFile)
        }
        self.phase = .attempting(Attempt(from: 0))
        return actions + [.startTransfer(range: nil)]
    }

    private mutating func retry(
        after failure: TaskFailure, moved: Int64, minimum: Duration?, now: ContinuousClock.Instant
    ) -> [Action] {
        self.lastError = failure.message
        if moved > 0 && minimum == nil {
            self.failuresInARow = 0
            return self.beginAttempt()
        }
        self.failuresInARow = moved > 0 ? 1 : self.failuresInARow + 1
        guard self.failuresInARow < self.policy.maxAttempts else {
            let attempts = self.policy.maxAttempts
            return self.end(
                failure.withMessage("\(failure.message) (\(attempts) attempt\(attempts == 1 ? "" : "s") in a row)"),
                removePartial: !self.keepPartial)
        }
        let delay = max(self.policy.backoff(after: self.failuresInARow), minimum ?? .zero)
        self.phase = .backingOff(until: now + delay)
        return [.releaseSlot, .scheduleRetry(delay), .persist]
    }

    private mutating func end(_ failure: TaskFailure?, removePartial: Bool) -> [Action] {
        let held: Bool
        switch self.phase {
        case .attempting, .finishing, .renaming: held = true
        default: held = false
        }
        self.phase = .ended
        if self.state != .completed {
            self.state = .completed
            self.endFailure = failure
        }
        return (held ? [.releaseSlot] : []) + [.finish(failure, removePartial: removePartial), .persist]
    }
}

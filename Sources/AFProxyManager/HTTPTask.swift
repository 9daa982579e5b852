import AFProxyModel
import AFProxyStore
import AFProxyTransport
import FoundationEssentials
import NIOCore
import Synchronization

/// An HTTP task: what the registry holds and the verbs act on, executed by the `HTTPTransfer` its
/// transport made for it (in the daemon, on the curl session) and recorded by itself as that
/// transfer's delegate, as `AFURLSessionManagerTaskDelegate` records an NSURLSessionTask:
/// response head, byte counts, progress, metrics and failure. Its bytes pass here between the
/// client connection (`TaskClient`) and the transfer, with backpressure both ways.
///
/// What it decides lives in one `HTTPTaskStateMachine` behind one lock; every event goes
/// through it and the actions it answers are performed here, outside the lock (see
/// `perform(_:)`). The threads, and what each may call, are the task contract in `ManagedTask`.
package final class HTTPTask: @unchecked Sendable {
    package let id: Int
    /// The request as it goes upstream: the client's, or what a person made of it at a hold
    /// (`edit`), which replaces it before the transfer starts and never after.
    let requestNow: Locked<ProxyRequest>
    package let kind: TaskKind
    package let createdAt: Date
    package let client: any TaskClient
    /// The transfer carrying the response now: set in `init` (it needs `self` as its delegate),
    /// replaced on the session thread only by a transparent resume; other threads read it.
    private let current = Locked<(any HTTPTransfer)?>(nil)
    let context: TaskContext
    let machine: Locked<HTTPTaskStateMachine>

    /// What the record shows beyond the machine's state and failure, set on the session thread.
    struct Recorded {
        var responseHead: ProxyResponseHead?
        var metrics = TaskMetrics()
        var resumes: [TaskResume] = []
        var edits: [TaskEdit] = []
        /// What a person answered in the origin's place (`respond`).
        var answer: ProxyAnswer?
    }

    let recorded = Locked(Recorded())
    /// The bodies a record rule keeps (none, the usual case: nil each).
    let requestRecorder: BodyRecorder?
    private let responseRecorder: BodyRecorder?
    private let uploaded = Atomic<Int64>(0)
    private let downloaded = Atomic<Int64>(0)

    // Session thread only: what was gathered for the client since the last delivery.
    private var pendingInterim: [ProxyResponseHead] = []
    private var pendingHead: ProxyResponseHead?
    private var pendingBody: ByteBuffer?
    /// What one delivery gathers at most from a fast origin before it goes to the client's loop.
    static let gatherLimit = 256 << 10
    private let allocator = ByteBufferAllocator()
    /// Session thread only: the final head's body length while the body is still arriving (nil
    /// when it is not known ahead: chunked, or until the connection closes); the machine hears
    /// of the whole response once that many bytes came.
    private var awaitedBody: Int64?
    /// Session thread only: a response hold caught the head now in `pendingHead`, which goes to
    /// the client only once released, as a person may have edited it (`recorded.responseHead`).
    private var responseWasHeld = false

    /// `heldBy`: the hold rule that caught the task, which is then created suspended. `options`:
    /// `.proxy` for a proxied request, TLS verified for one read inside an intercepted connection.
    init(
        id: Int, request: ProxyRequest, client: any TaskClient, context: TaskContext, heldBy: Int? = nil,
        options: TransferOptions = .proxy, edits: [TaskEdit] = [], answersLocally: Bool = false
    ) {
        self.id = id
        self.machine = Locked(
            HTTPTaskStateMachine(
                heldBy: heldBy,
                continuation: TransparentResume(
                    method: request.method, headers: request.headers, limit: context.transparentResumeLimit),
                answersLocally: answersLocally))
        self.requestNow = Locked(request)
        self.kind = request.kind
        self.client = client
        self.context = context
        self.createdAt = Date()
        if !edits.isEmpty { self.recorded.withLock { $0.edits = edits } }
        let plan = context.bodies == nil ? nil : context.recordPlan(request)
        func recorder(_ side: BodySide, _ wanted: Bool) -> BodyRecorder? {
            guard let plan, wanted else { return nil }
            return context.bodies?.recorder(task: id, side: side, rule: plan.rule, limit: plan.limit)
        }
        self.requestRecorder = recorder(.request, plan?.request == true && request.kind == .upload)
        self.responseRecorder = recorder(.response, plan?.response == true)
        let transfer = context.transport.makeTransfer(
            TransferRequest(
                request: request, options: options, destinations: context.destinations(),
                throttle: context.throttleTicket(task: id, host: self.throttleHost),
                affinity: client.eventLoop.map(SessionAffinity.init)),
            delegate: self)
        self.current.withLock { $0 = transfer }
    }

    /// The host throttle rules are matched against: the client's, edits aside (an edit keeps it).
    var throttleHost: String { self.request.host }

    package var request: ProxyRequest { self.requestNow.withLock { $0 } }

    /// The transfer carrying the response now.
    package var transfer: any HTTPTransfer { self.current.withLock { $0! } }

    /// Puts `transfer` in the place of the current one: an edit's, before the start, and a
    /// transparent resume's.
    func replaceTransfer(_ transfer: any HTTPTransfer) {
        self.current.withLock { $0 = transfer }
    }

    package var state: TaskState { self.machine.withLock { $0.state } }

    package var bytesUp: Int64 { self.uploaded.load(ordering: .relaxed) }
    package var bytesDown: Int64 { self.downloaded.load(ordering: .relaxed) }

    /// The task as the control API shows it, now.
    package func record() -> TaskRecord {
        let (state, failure, uploadEnded, heldBy) = self.machine.withLock {
            ($0.state, $0.failure, $0.upload.ended && $0.upload.bytes == 0, $0.heldBy)
        }
        let recorded = self.recorded.withLock { $0 }
        let request = self.request
        var upload = TransferProgress(completed: self.bytesUp)
        switch request.body {
        case .length(let length): upload.total = length
        case .none: upload.total = 0
        case .streamed where uploadEnded: upload.total = upload.completed  // known once it ended
        case .streamed: break
        }
        let download = TransferProgress(
            completed: self.bytesDown, total: request.isHead ? 0 : recorded.responseHead?.contentLength)
        return TaskRecord(
            id: self.id, kind: self.kind, state: state, method: request.method,
            url: request.url, client: request.client, createdAt: self.createdAt,
            status: recorded.responseHead?.status, error: failure?.message,
            errorCode: failure?.code, upload: upload, download: download,
            metrics: recorded.metrics, requestHeaders: request.headers,
            responseHeaders: recorded.responseHead?.headers.map {
                HTTPHeaderField($0.name, FieldText.display($0.value))
            },
            resumes: recorded.resumes,
            proxyUser: request.proxyUser,
            limit: self.context.throttler.limit(task: self.id, host: self.throttleHost),
            heldBy: heldBy, clientProcess: request.process?.process, parent: request.parent,
            bodies: self.requestRecorder == nil && self.responseRecorder == nil
                ? nil
                : RecordedBodies(request: self.requestRecorder?.recorded, response: self.responseRecorder?.recorded),
            replayOf: request.replayOf, edits: recorded.edits, clientHTTPVersion: request.clientHTTPVersion
        )
    }

    /// Once registered and `created` published: starts the transfer, or waits as held.
    func begin() {
        self.perform(self.machine.withLock { $0.begin() })
    }

    /// Carries out what the machine decided; never called with the machine's lock held.
    func perform(_ action: HTTPTaskStateMachine.Action) {
        switch action {
        case .none:
            break
        case .suspend:
            self.transfer.suspend()
            self.client.task(self, didChangeSuspension: true)
            self.context.events.publish(.suspended, self.record())
        case .resume:
            self.transfer.resume()
            self.client.task(self, didChangeSuspension: false)
            self.context.events.publish(.resumed, self.record())
        case .abort(let failure):
            self.transfer.cancel(reason: failure)
        case .continueSending:
            self.transfer.continueSending()
        case .continueReceiving(let resize):
            self.resizeWindow(resize)
            self.transfer.continueReceiving()
        case .readClient:
            self.client.taskWantsRequestBody(self)
        case .askForBody:
            self.client.taskAwaitsRequestBody(self)
        case .start:
            self.transfer.start()
        case .hold:
            self.client.task(self, didChangeSuspension: true)
            self.context.events.publish(.held, self.record())
        case .release(let start):
            if start {
                self.transfer.start()
                self.client.task(self, didChangeSuspension: false)
            }
            self.context.events.publish(.resumed, self.record())
        case .finish(let result, let release):
            self.finish(result, release: release)
        case .finishAnswered(let release):
            self.finishAnswered(release: release)
        case .requestRest(let range):
            self.requestRest(range)
        case .holdResponse:
            self.transfer.suspend()
            self.context.events.publish(.held, self.record())
        case .releaseResponse(let end, let release):
            self.context.events.publish(.resumed, self.record())
            if let end {
                self.finish(end, release: release)
            } else {
                self.transfer.resume()
            }
        }
    }

    /// Records the end, answers the client, completes. On the session thread, or, for a task
    /// whose transfer ended while its response was held, on the thread of the verb that ends it:
    /// its transfer calls nothing any more, and the machine's lock ordered its last callback
    /// before this, so the session thread's gathered state is this thread's now.
    private func finish(_ result: UpstreamResult, release: Int) {
        self.context.budget.release(release)
        if self.machine.withLock({ $0.heldResponseDropped }) {
            // Canceled while its response was held: the client gets the cancel, not that head.
            self.pendingHead = nil
            self.pendingBody = nil
        }
        var delivery = self.takePending(end: result.end)!
        if result == .success { delivery.trailers = self.transfer.trailers }
        self.client.task(self, deliver: delivery)
        self.context.completed(self)
    }

    /// The answer a person gave in the origin's place goes to the client as the whole response;
    /// the transfer never started.
    private func finishAnswered(release: Int) {
        self.context.budget.release(release)
        let answer = self.recorded.withLock { recorded in
            recorded.responseHead = recorded.answer?.head
            return recorded.answer
        }
        guard let answer else { return }
        // A HEAD's answer is the head a GET would get (its Content-Length the body's), alone.
        let body = self.request.isHead ? ByteBuffer() : ByteBuffer(bytes: answer.body)
        self.downloaded.add(Int64(body.readableBytes), ordering: .relaxed)
        self.machine.withLock { $0.delivered(body.readableBytes) }
        self.responseRecorder?.append(body)
        self.client.task(self, deliver: ResponseDelivery(head: answer.head, body: body, end: .complete))
        self.context.completed(self)
    }

    /// Grows the window of a client that drained it promptly (if the budget allows), shrinks
    /// that of one that kept the transfer waiting.
    private func resizeWindow(_ change: ReceiveWindow.Change) {
        switch change {
        case .keep: return
        case .grow(let reserve): guard self.context.budget.reserve(reserve) else { return }
        case .shrink(let release): self.context.budget.release(release)
        }
        self.machine.withLock { $0.resizeWindow(change) }
    }
}

// MARK: - ManagedTask (any thread)

extension HTTPTask: MachineDrivenTask {}

// MARK: - the client side (the client's event loop)

extension HTTPTask {
    /// Answers whether the client may be read further; when not, `TaskClient.taskWantsRequestBody`
    /// says when it may.
    package func appendRequestBody(_ buffer: ByteBuffer) -> Bool {
        let (keepReading, action) = self.machine.withLock { machine in
            // Under the lock: an edit that replaces the body comes before or after this chunk.
            if !machine.clientBodyIgnored { self.requestRecorder?.append(buffer) }
            return machine.requestBodyArrived(buffer)
        }
        self.perform(action)
        return keepReading
    }

    package func finishRequestBody() {
        self.perform(self.machine.withLock { $0.requestBodyEnded() })
    }

    /// `bytes` of a delivered body reached the client's socket.
    package func clientDidWrite(bytes: Int) {
        self.perform(
            self.machine.withLock { $0.clientWrote(bytes, now: ContinuousClock.now, unsent: self.client.unsentBytes()) }
        )
    }

    /// The client went away: the task ends and frees its upstream transfer, unless the client had
    /// the whole response (see the table at `HTTPTaskStateMachine`).
    package func clientClosed() {
        let action = self.machine.withLock { $0.clientClosed() }
        // The failpoint leaves the task as a gap in the rule would, for the safety net's test.
        guard !Failpoints.clientCloseIgnored else { return }
        self.perform(action)
    }

    /// The client went silent in the middle of its request body for too long (`body-timeout`):
    /// the task ends with `failure`, which the client is answered with (408) if its response had
    /// not started.
    package func clientWentSilent(_ failure: TaskFailure) {
        self.perform(self.machine.withLock { $0.clientFailed(failure) })
    }

    /// The client's connection is gone while the task lives on: what the safety net looks at.
    package var clientGone: Bool { self.machine.withLock { $0.clientGone } }

    /// The safety net's end: a cancel with `failure`, or, when a cancel is under way already and
    /// did not end the task, the transfer is told again (a done transfer ignores it).
    func endStalled(_ failure: TaskFailure) {
        do {
            try self.cancel(failure)
        } catch {
            self.transfer.cancel(reason: failure)
        }
    }

    /// The client cannot be given the response (the listener answered 502 instead): the task
    /// ends as failed by the origin's response.
    package func abandon(because message: String) {
        self.perform(self.machine.withLock { $0.clientFailed(.badResponse(message)) })
    }
}

// MARK: - HTTPTransferDelegate (the session thread)

extension HTTPTask: HTTPTransferDelegate {
    package func transfer(_ transfer: any HTTPTransfer, didReceiveInterim head: ProxyResponseHead) {
        self.pendingInterim.append(head)
    }

    package func transfer(_ transfer: any HTTPTransfer, didReceive head: ProxyResponseHead, metrics: TaskMetrics) {
        switch self.machine.withLock({ $0.finalHeadArrived(head, now: Date()) }) {
        case .first:
            break
        case .continued:
            // The rest of the same response goes on to the client.
            let resumes = self.machine.withLock { $0.continuation?.resumes ?? [] }
            self.recorded.withLock { $0.resumes = resumes }
            return self.context.events.publish(.resumedAtOffset, self.record())
        case .notTheRest(let failure):
            // Its transfer is stopped and the task ends with the break that led to it: the
            // client's response ends short, never spliced.
            guard !Failpoints.refusedContinuationRunsOn else { return }
            return transfer.cancel(reason: failure)
        }
        var metrics = metrics
        metrics.totalMs = nil  // not over yet: the total is known at completion
        self.recorded.withLock { recorded in
            recorded.responseHead = head
            recorded.metrics = metrics
        }
        self.pendingHead = head
        if let rule = self.context.responseHold(self) {
            let action = self.machine.withLock { $0.holdResponse(rule: rule) }
            if action != .none {
                self.responseWasHeld = true
                self.perform(action)
            }
        }
        let length: Int64? =
            self.request.isHead || head.status == 204 || head.status == 304 ? 0 : head.contentLength
        if let length {
            self.machine.withLock { $0.bodyDeclared(length) }
            self.awaitedBody = length
            self.checkWholeResponse()
        }
    }

    /// Tells the machine once the whole response arrived (its length reached).
    private func checkWholeResponse() {
        guard let awaited = self.awaitedBody, self.bytesDown >= awaited else { return }
        self.awaitedBody = nil
        self.perform(self.machine.withLock { $0.responseArrived(length: awaited) })
    }

    package func transfer(
        _ transfer: any HTTPTransfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer
    ) -> BodyReceipt {
        let waiting = (self.pendingBody?.readableBytes ?? 0) + bytes.count
        // Counted in the same critical section that took them: once a suspend holds the lock,
        // every byte taken before it is in the count its record shows, and none follows.
        let receipt = self.machine.withLock { machine -> BodyReceipt? in
            guard !machine.discarding else { return nil }
            let receipt = machine.responseBodyArrived(waiting: waiting, now: ContinuousClock.now)
            if receipt != .refused {
                self.downloaded.add(Int64(bytes.count), ordering: .relaxed)
                machine.responseBodyTaken(bytes.count)
            }
            return receipt
        }
        guard let receipt else { return .taken }  // a continuation's that is not the rest: dropped
        guard receipt != .refused else { return .refused }
        if let body = self.pendingBody, body.writableBytes < bytes.count {
            if body.readableBytes + bytes.count > Self.gatherLimit {
                // Handed over now rather than grown further: the client's loop starts writing
                // while curl reads on, and no realloc copies what gathered.
                if let delivery = self.takePending(end: nil) { self.client.task(self, deliver: delivery) }
            } else if body.capacity < Self.gatherLimit {
                // A second callback in one flush: the origin is fast, so grow once to the limit
                // instead of doubling from the first callback's size.
                self.pendingBody!.reserveCapacity(Self.gatherLimit)
            }
        }
        if self.pendingBody == nil {
            // Sized to what arrived: most responses fit one callback, and a roomier buffer that
            // is never filled still dirties pages that stay resident after it is freed.
            self.pendingBody = self.allocator.buffer(capacity: bytes.count)
        }
        self.pendingBody!.writeBytes(bytes)
        self.checkWholeResponse()
        return receipt
    }

    package func transferDidReceiveWholeBody(_ transfer: any HTTPTransfer) {
        self.perform(
            self.machine.withLock { machine in
                machine.discarding ? .none : machine.responseArrived(length: self.bytesDown)
            })
    }

    package func transfer(
        _ transfer: any HTTPTransfer, fillRequestBody buffer: UnsafeMutableRawBufferPointer
    ) -> RequestBodyRead {
        let (read, action) = self.machine.withLock { machine in
            let (read, action) = machine.fillRequestBody(buffer)
            if case .bytes(let count) = read { self.uploaded.add(Int64(count), ordering: .relaxed) }
            return (read, action)
        }
        self.perform(action)
        return read
    }

    package func transferRewindRequestBody(_ transfer: any HTTPTransfer) -> Bool {
        self.machine.withLock { machine in
            guard let count = machine.rewindRequestBody() else { return false }
            self.uploaded.add(-Int64(count), ordering: .relaxed)
            return true
        }
    }

    package func transferDidFlush(_ transfer: any HTTPTransfer) {
        guard let delivery = self.takePending(end: nil) else { return }
        self.client.task(self, deliver: delivery)
    }

    package func transfer(_ transfer: any HTTPTransfer, didCompleteWith result: UpstreamResult, metrics: TaskMetrics) {
        self.recorded.withLock { $0.metrics = metrics }
        self.perform(self.machine.withLock { $0.complete(result) })
    }

    /// The origin broke the response off and the machine asks for the rest: the task goes on
    /// with a new transfer. Session thread.
    private func requestRest(_ range: DownloadStateMachine.RangeRequest) {
        // What arrived before the break goes to the client now, not with the rest.
        if let delivery = self.takePending(end: nil) { self.client.task(self, deliver: delivery) }
        // The current transfer's options and throttle carry over; the request is the client's
        // (not the current one's, which may hold an earlier range) with this range, and the
        // destination rules are those in force now.
        var next = self.transfer.request
        next.request = self.request
        next.request.headers.append(HTTPHeaderField("Range", "bytes=\(range.offset)-"))
        next.request.headers.append(HTTPHeaderField("If-Range", range.ifRange))
        next.destinations = self.context.destinations()
        let transfer = self.context.transport.makeTransfer(next, delegate: self)
        self.replaceTransfer(transfer)
        transfer.start()
    }

    private func takePending(end: ResponseEnd?) -> ResponseDelivery? {
        if self.responseWasHeld, self.pendingHead != nil {
            guard end != nil || !self.machine.withLock({ $0.heldAtResponse }) else { return nil }
            // As a person left it at the hold.
            self.pendingHead = self.recorded.withLock { $0.responseHead } ?? self.pendingHead
        }
        let body = self.pendingBody
        guard self.pendingHead != nil || body != nil || end != nil || !self.pendingInterim.isEmpty else { return nil }
        if let body {
            let count = body.readableBytes
            self.machine.withLock { $0.delivered(count) }
            self.responseRecorder?.append(body)
        }
        let delivery = ResponseDelivery(interim: self.pendingInterim, head: self.pendingHead, body: body, end: end)
        self.pendingInterim.removeAll()
        self.pendingHead = nil
        self.pendingBody = nil
        return delivery
    }
}

extension UpstreamResult {
    fileprivate var end: ResponseEnd {
        switch self {
        case .success: .complete
        case .failure(let failure): .failed(failure)
        }
    }
}

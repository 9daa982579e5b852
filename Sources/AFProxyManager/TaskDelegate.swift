import AFProxyCurl
import AFProxyModel
import FoundationEssentials
import NIOCore
import Synchronization

/// One per task, as `AFURLSessionManagerTaskDelegate` is one per NSURLSessionTask: it records the
/// response head, byte counts, progress, metrics and error, and it is where the task's bytes are
/// handed between the client connection and curl, with backpressure both ways.
///
/// Three threads touch it: the session thread (the `UpstreamTransferDelegate` methods), the
/// client's event loop (the request-body and write-acknowledgement methods) and the control
/// server (snapshots, verbs). What more than one of them reads is behind `shared` or atomic; the
/// `pending*` properties are the session thread's alone.
public final class TaskDelegate: @unchecked Sendable {
    public let id: Int
    public let request: ProxyRequest
    public let createdAt: Date
    public let client: any TaskClient
    /// Set once in `init` (it needs `self` as its delegate), never cleared: other threads read it.
    public private(set) var transfer: UpstreamTransfer!
    private unowned let manager: SessionManager

    struct Shared {
        var machine = TaskStateMachine()
        var responseHead: ProxyResponseHead?
        var error: String?
        var failureCode: String?
        var metrics = TaskMetrics()
    }

    private let shared = Locked(Shared())
    private let uploaded = Atomic<Int64>(0)
    private let downloaded = Atomic<Int64>(0)
    private let upload = Locked(UploadQueue())
    /// Response bytes handed to the client's event loop and not yet written to its socket.
    private let inFlight = Atomic<Int>(0)
    /// How many bytes may be on their way to the client; changed on the client's event loop,
    /// released at completion. `windowSize` mirrors its size for the session thread's hot path.
    private let window = Locked((window: ReceiveWindow(), closed: false))
    private let windowSize = Atomic<Int>(ReceiveWindow.minimum)
    /// When the transfer last paused because the client had its window full (`Clock.nanoseconds`),
    /// 0 while it did not: how long the client then took to drain says whether it keeps up.
    private let pausedForClientAt = Atomic<Int64>(0)
    /// Response bytes written to the client's socket so far.
    private let clientWritten = Atomic<Int64>(0)
    /// Set before a suspend is even queued to the session thread: from that moment every curl
    /// callback is refused, so not one byte is counted or moved once the API said "suspended".
    private let suspended = Atomic<Bool>(false)

    // Session thread only.
    private var pendingInterim: [ProxyResponseHead] = []
    private var pendingHead: ProxyResponseHead?
    private var pendingBody: ByteBuffer?
    private let allocator = ByteBufferAllocator()

    init(id: Int, request: ProxyRequest, client: any TaskClient, manager: SessionManager) {
        self.id = id
        self.request = request
        self.client = client
        self.manager = manager
        self.createdAt = Date()
        self.transfer = UpstreamTransfer(request: request, delegate: self)
    }

    public var kind: TaskKind { self.request.kind }

    public var state: TaskState { self.shared.withLock { $0.machine.state } }

    /// The task as the control API shows it, now.
    public func record() -> TaskRecord {
        let shared = self.shared.withLock { $0 }
        var upload = TransferProgress(completed: self.uploaded.load(ordering: .relaxed))
        if case .length(let length) = self.request.body { upload.total = length }
        if self.request.body == .none { upload.total = 0 }
        if self.request.body == .streamed, self.upload.withLock({ $0.ended && $0.bytes == 0 }) {
            upload.total = upload.completed  // a body of unknown length is known once it ended
        }
        let download = TransferProgress(
            completed: self.downloaded.load(ordering: .relaxed),
            total: self.request.isHead ? 0 : shared.responseHead?.contentLength
        )
        return TaskRecord(
            id: self.id, kind: self.kind, state: shared.machine.state, method: self.request.method,
            url: self.request.url, client: self.request.client, createdAt: self.createdAt,
            status: shared.responseHead?.status, error: shared.error, failure: shared.failureCode,
            upload: upload, download: download,
            metrics: shared.metrics, requestHeaders: self.request.headers,
            responseHeaders: shared.responseHead?.headers.map { HTTPHeaderField($0.name, FieldText.display($0.value)) }
        )
    }

    public var bytesUp: Int64 { self.uploaded.load(ordering: .relaxed) }
    public var bytesDown: Int64 { self.downloaded.load(ordering: .relaxed) }

    // MARK: verbs (any thread)

    func suspend() throws(IllegalTransition) {
        _ = try self.shared.withLock { shared throws(IllegalTransition) in
            let action = try shared.machine.suspend()
            self.suspended.store(true, ordering: .sequentiallyConsistent)
            return action
        }
        self.manager.session.suspend(self.transfer)
        self.client.task(self, didChangeSuspension: true)
    }

    func resume() throws(IllegalTransition) {
        _ = try self.shared.withLock { shared throws(IllegalTransition) in
            let action = try shared.machine.resume()
            self.suspended.store(false, ordering: .sequentiallyConsistent)
            return action
        }
        self.manager.session.resume(self.transfer)
        self.client.task(self, didChangeSuspension: false)
    }

    /// `reason` becomes the task's error: "canceled" when a person asked for it.
    func cancel(reason: String = "canceled") throws(IllegalTransition) {
        try self.cancel(failure: UpstreamFailure(.canceled, reason))
    }

    private func cancel(failure: UpstreamFailure) throws(IllegalTransition) {
        _ = try self.shared.withLock { shared throws(IllegalTransition) in try shared.machine.cancel() }
        self.manager.session.cancel(self.transfer, reason: failure)
    }

    // MARK: client side (the client's event loop)

    /// Answers whether the client may be read further; when not, `TaskClient.taskWantsRequestBody`
    /// says when it may.
    public func appendRequestBody(_ buffer: ByteBuffer) -> Bool {
        let (wake, keepReading) = self.upload.withLock { queue in
            let keepReading = queue.append(buffer)
            let wake = queue.curlWaiting
            queue.curlWaiting = false
            return (wake, keepReading)
        }
        if wake { self.manager.session.continueSending(self.transfer) }
        return keepReading
    }

    public func finishRequestBody() {
        let wake = self.upload.withLock { queue in
            queue.ended = true
            defer { queue.curlWaiting = false }
            return queue.curlWaiting
        }
        if wake { self.manager.session.continueSending(self.transfer) }
    }

    /// `bytes` of a delivered body reached the client's socket.
    public func clientDidWrite(bytes: Int) {
        let remaining = self.inFlight.subtract(bytes, ordering: .relaxed).newValue
        self.clientWritten.add(Int64(bytes), ordering: .relaxed)
        let low = self.windowSize.load(ordering: .relaxed) / 2
        guard remaining < low && remaining + bytes >= low else { return }
        let pausedAt = self.pausedForClientAt.exchange(0, ordering: .relaxed)
        if pausedAt != 0 { self.adjustWindow(paused: .nanoseconds(Clock.nanoseconds() - pausedAt)) }
        self.manager.session.continueReceiving(self.transfer)
    }

    /// Grows the window of a client that drained it promptly (if the budget allows), shrinks
    /// that of one that kept the transfer waiting.
    private func adjustWindow(paused: Duration) {
        let budget = self.manager.budget
        self.window.withLock { state in
            guard !state.closed else { return }
            let change = state.window.afterDrain(paused: paused, written: self.clientWritten.load(ordering: .relaxed))
            switch change {
            case .keep: return
            case .grow(let reserve): guard budget.reserve(reserve) else { return }
            case .shrink(let release): budget.release(release)
            }
            state.window.apply(change)
            self.windowSize.store(state.window.size, ordering: .relaxed)
        }
    }

    /// The client went away: the task ends and frees its upstream transfer.
    public func clientClosed() {
        try? self.cancel(reason: "canceled: client closed the connection")
    }

    /// The client cannot be given the response (the listener answered 502 instead): the task
    /// ends as failed by the origin's response.
    public func abandon(because message: String) {
        try? self.cancel(failure: UpstreamFailure(.badResponse, message))
    }
}

// MARK: - UpstreamTransferDelegate (the session thread)

extension TaskDelegate: UpstreamTransferDelegate {
    public func transfer(_ transfer: UpstreamTransfer, didReceiveInterim head: ProxyResponseHead) {
        self.pendingInterim.append(head)
    }

    public func transfer(_ transfer: UpstreamTransfer, didReceive head: ProxyResponseHead, metrics: TaskMetrics) {
        var metrics = metrics
        metrics.totalMs = nil  // not over yet: the total is known at completion
        self.upload.withLock { $0.forgetSent() }
        self.shared.withLock { shared in
            shared.responseHead = head
            shared.metrics = metrics
        }
        self.pendingHead = head
    }

    public func transfer(_ transfer: UpstreamTransfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyReceipt {
        if self.suspended.load(ordering: .sequentiallyConsistent) { return .refused }
        if self.pendingBody == nil {
            // Sized to what arrived: most responses fit one callback, and a roomier buffer that
            // is never filled still dirties pages that stay resident after it is freed.
            self.pendingBody = self.allocator.buffer(capacity: bytes.count)
        }
        self.pendingBody!.writeBytes(bytes)
        self.downloaded.add(Int64(bytes.count), ordering: .relaxed)
        // Taken, always: refused bytes would be copied into curl's pause buffer, a second copy
        // of what waits for the client. Once the window is full, receiving pauses instead.
        let waiting = self.inFlight.load(ordering: .relaxed) + self.pendingBody!.readableBytes
        guard waiting >= self.windowSize.load(ordering: .relaxed) else { return .taken }
        _ = self.pausedForClientAt.compareExchange(expected: 0, desired: Clock.nanoseconds(), ordering: .relaxed)
        return .takenWindowFull
    }

    public func transfer(_ transfer: UpstreamTransfer, fillRequestBody buffer: UnsafeMutableRawBufferPointer) -> RequestBodyRead {
        if self.suspended.load(ordering: .sequentiallyConsistent) { return .pause }
        var wantsMore = false
        let read: RequestBodyRead = self.upload.withLock { queue in
            if queue.bytes == 0 {
                if queue.ended { return .end }
                queue.curlWaiting = true
                return .pause
            }
            let count = queue.drain(into: buffer)
            if queue.readerStopped && queue.bytes < UploadQueue.lowWatermark {
                queue.readerStopped = false
                wantsMore = true
            }
            return .bytes(count)
        }
        if case .bytes(let count) = read { self.uploaded.add(Int64(count), ordering: .relaxed) }
        if wantsMore { self.client.taskWantsRequestBody(self) }
        return read
    }

    public func transferRewindRequestBody(_ transfer: UpstreamTransfer) -> Bool {
        guard let count = self.upload.withLock({ $0.rewind() }) else { return false }
        self.uploaded.add(-Int64(count), ordering: .relaxed)
        return true
    }

    public func transferDidFlush(_ transfer: UpstreamTransfer) {
        guard let delivery = self.takePending(end: nil) else { return }
        self.client.task(self, deliver: delivery)
    }

    public func transfer(_ transfer: UpstreamTransfer, didCompleteWith result: UpstreamResult, metrics: TaskMetrics) {
        let end: ResponseEnd
        switch result {
        case .success: end = .complete
        case .failure(let failure): end = .failed(failure)
        }
        self.shared.withLock { shared in
            _ = shared.machine.complete()
            shared.metrics = metrics
            if case .failed(let failure) = end {
                shared.error = failure.message
                shared.failureCode = failure.code
            }
        }
        let reserved = self.window.withLock { state in
            state.closed = true
            return state.window.reserved
        }
        self.manager.budget.release(reserved)
        var delivery = self.takePending(end: end)!
        if result == .success { delivery.trailers = transfer.trailers }
        self.client.task(self, deliver: delivery)
        self.manager.taskDidComplete(self)
    }

    private func takePending(end: ResponseEnd?) -> ResponseDelivery? {
        let body = self.pendingBody
        guard self.pendingHead != nil || body != nil || end != nil || !self.pendingInterim.isEmpty else { return nil }
        if let body { self.inFlight.add(body.readableBytes, ordering: .relaxed) }
        let delivery = ResponseDelivery(interim: self.pendingInterim, head: self.pendingHead, body: body, end: end)
        self.pendingInterim.removeAll()
        self.pendingHead = nil
        self.pendingBody = nil
        return delivery
    }
}

/// Monotonic nanoseconds, for a duration measured across threads through an atomic.
enum Clock {
    private static let origin = ContinuousClock.now

    static func nanoseconds() -> Int64 {
        let (seconds, attoseconds) = (ContinuousClock.now - Self.origin).components
        return max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

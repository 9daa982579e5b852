import AFProxyModel
import FoundationEssentials
import NIOCore
import Synchronization

/// One CONNECT tunnel as a task, NSURLSession's stream task: what the registry, the verbs and
/// the control API see. Its bytes never pass through here: `TunnelRelay` moves them on the
/// client connection's event loop. This keeps the record (target, byte counts, metrics, why it
/// ended) and turns the verbs into relay calls.
///
/// Why NIO rather than curl's CONNECT_ONLY with `curl_easy_send`/`recv`: a curl relay would hop
/// every chunk between the session thread and the client's event loop and copy it twice (into
/// curl's buffer and out of it). The upstream channel here lives on the client's own event loop,
/// so a chunk read on one socket is queued on the other as the same buffer. TLS is end to end
/// between the client and the origin; the tunnel never sees it.
///
/// `record()` and the verbs may be called from any thread; the rest from `eventLoop`.
public final class StreamTask: Sendable {
    public let id: Int
    public let request: StreamRequest
    public let createdAt: Date
    /// Succeeds once the upstream connection is open: the caller answers 200 and attaches the
    /// client. Fails with an `UpstreamFailure` whose `httpStatus` is the answer (502 refused or
    /// unreachable, 504 timeout, 503 canceled).
    public let established: EventLoopFuture<Void>
    private let eventLoop: any EventLoop
    private let manager: SessionManager
    private let connectTimeout: Duration
    private let idleTimeout: Duration?
    private let started = NIODeadline.now()
    private let counters = TunnelCounters()
    private let relay: NIOLoopBound<TunnelRelay>

    struct Shared {
        var machine = TaskStateMachine()
        /// 200 once the tunnel is established (the CONNECT answer), else nil.
        var status: Int?
        var error: String?
        var endReason: String?
        var metrics = TaskMetrics()
    }

    private let shared = Locked(Shared())

    /// On `eventLoop`.
    init(
        id: Int, request: StreamRequest, eventLoop: any EventLoop, connectTimeout: Duration, idleTimeout: Duration?,
        manager: SessionManager
    ) {
        self.id = id
        self.request = request
        self.createdAt = Date()
        self.eventLoop = eventLoop
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.manager = manager
        let promise = eventLoop.makePromise(of: Void.self)
        self.established = promise.futureResult
        self.relay = NIOLoopBound(TunnelRelay(counters: self.counters, established: promise), eventLoop: eventLoop)
    }

    /// On `eventLoop`: starts connecting upstream.
    func start() {
        self.relay.value.start(
            self, timeout: self.connectTimeout, idleTimeout: self.idleTimeout, started: self.started,
            eventLoop: self.eventLoop)
    }

    public var kind: TaskKind { .stream }

    public var state: TaskState { self.shared.withLock { $0.machine.state } }

    public var bytesUp: Int64 { self.counters.uploaded.load(ordering: .relaxed) }
    public var bytesDown: Int64 { self.counters.downloaded.load(ordering: .relaxed) }

    /// The task as the control API shows it, now. Both totals are unknown: a tunnel ends when
    /// one side closes.
    public func record() -> TaskRecord {
        let shared = self.shared.withLock { $0 }
        return TaskRecord(
            id: self.id, kind: .stream, state: shared.machine.state, method: "CONNECT",
            url: self.request.authority, client: self.request.client, createdAt: self.createdAt,
            status: shared.status, error: shared.error,
            upload: TransferProgress(completed: self.bytesUp), download: TransferProgress(completed: self.bytesDown),
            metrics: shared.metrics, requestHeaders: self.request.headers, responseHeaders: nil,
            endReason: shared.endReason)
    }

    // MARK: the client connection (on `eventLoop`)

    /// The client's side joins the relay once its 200 is written; false if the tunnel is over
    /// (the caller closes the client). The caller then removes what holds reads in front of the
    /// glue and calls `channel.read()`.
    public func attachClient(_ channel: any Channel) -> Bool {
        self.relay.value.attachClient(channel)
    }

    /// The client went away before the tunnel was established: the task ends.
    public func clientClosed() {
        try? self.cancel(reason: "canceled: client closed the connection")
    }

    // MARK: reports of the relay (on `eventLoop`)

    func didConnect(_ connected: TunnelConnector.Connected) {
        self.shared.withLock { shared in
            shared.status = 200
            shared.metrics.dnsMs = connected.dnsMs
            shared.metrics.connectMs = connected.connectMs
            shared.metrics.remoteAddress = connected.remoteAddress
            shared.metrics.reusedConnection = false
        }
    }

    func didReceiveFirstByte() {
        let now = self.millisecondsSinceStart()
        self.shared.withLock { $0.metrics.ttfbMs = now }
    }

    func complete(_ end: TunnelEnd) {
        let now = self.millisecondsSinceStart()
        self.shared.withLock { shared in
            _ = shared.machine.complete()
            shared.error = end.error
            shared.endReason = end.reason
            shared.metrics.totalMs = now
        }
        self.manager.taskDidComplete(self)
    }

    private func millisecondsSinceStart() -> Double {
        Double((NIODeadline.now() - self.started).nanoseconds) / 1_000_000
    }
}

// MARK: - ManagedTask (any thread)

extension StreamTask: ManagedTask {
    /// Both directions stop at once for the record: from here the glue holds what it reads and
    /// lets no further `read()` through (no hop needed, it checks the flag on every chunk).
    func suspend() throws(IllegalTransition) {
        try self.shared.withLock { shared throws(IllegalTransition) in
            _ = try shared.machine.suspend()
            self.counters.setSuspended(true)
        }
    }

    func resume() throws(IllegalTransition) {
        try self.shared.withLock { shared throws(IllegalTransition) in
            _ = try shared.machine.resume()
            self.counters.setSuspended(false)
        }
        let relay = self.relay
        self.eventLoop.execute { relay.value.resume() }
    }

    /// Closes both sides; `reason` is the task's error ("canceled" when a person asked).
    func cancel(reason: String) throws(IllegalTransition) {
        _ = try self.shared.withLock { shared throws(IllegalTransition) in try shared.machine.cancel() }
        let relay = self.relay
        self.eventLoop.execute { relay.value.cancel(reason: reason) }
    }
}

/// A tunnel's byte counts and suspension: written on the relay's path for every chunk, read by
/// the control server, so atomics rather than the task's lock.
final class TunnelCounters: Sendable {
    let uploaded = Atomic<Int64>(0)
    let downloaded = Atomic<Int64>(0)
    private let suspended = Atomic<Bool>(false)

    var isSuspended: Bool { self.suspended.load(ordering: .sequentiallyConsistent) }

    func setSuspended(_ value: Bool) {
        self.suspended.store(value, ordering: .sequentiallyConsistent)
    }

    /// Bytes from the client go to the origin (upload); bytes from upstream to the client (download).
    func add(_ count: Int, from side: TunnelLifecycle.Side) {
        switch side {
        case .client: self.uploaded.add(Int64(count), ordering: .relaxed)
        case .upstream: self.downloaded.add(Int64(count), ordering: .relaxed)
        }
    }
}

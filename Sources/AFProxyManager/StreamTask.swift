import AFProxyModel
import AFProxyTunnel
import FoundationEssentials
import NIOCore
import Synchronization

/// One CONNECT tunnel as a task, NSURLSession's stream task: what the registry, the verbs and
/// the control API see, executed by a `TunnelTransport` (in the daemon the relay's
/// `TunnelTransfer`) whose reports it records (target, byte counts, metrics, why it ended). Its
/// bytes never pass through here. Its state is one `StreamTaskStateMachine`; the contract it
/// keeps is written in `ManagedTask`.
package final class StreamTask: Sendable {
    package let id: Int
    package let request: StreamRequest
    package let createdAt: Date
    private let context: TaskContext
    /// When the transport started (uptime nanoseconds), which the timeline counts from, as an
    /// HTTP task's curl metrics count from its transfer's start: for a held tunnel, its release.
    private let started = Atomic<UInt64>(NIODeadline.now().uptimeNanoseconds)
    let machine: Locked<StreamTaskStateMachine>
    private let eventLoop: any EventLoop
    /// Set once in `init` (it needs `self` as its delegate); read from any thread.
    private let tunnel = Locked<(any TunnelTransport)?>(nil)

    /// What the record shows beyond the machine's state.
    private struct Recorded {
        /// 200 once the tunnel is established (the CONNECT answer); an upgrade's origin's
        /// answer (101 when it switched protocols); else nil.
        var status: Int?
        var end: TunnelEnd?
        var metrics = TaskMetrics()
        /// Requests read inside an intercepted connection so far.
        var requests = 0
        /// A plain tunnel's relay once it is established.
        var relay: TunnelRelayKind?
    }

    private let recorded = Locked(Recorded())

    /// On `eventLoop`, the client connection's, where the tunnel will run. `heldBy`: the hold
    /// rule that caught the task, which is then created suspended.
    init(
        id: Int, request: StreamRequest, eventLoop: any EventLoop, context: TaskContext, heldBy: Int? = nil,
        upgrade: TunnelUpgrade? = nil
    ) {
        self.id = id
        self.eventLoop = eventLoop
        self.machine = Locked(heldBy.map { StreamTaskStateMachine(heldBy: $0) } ?? StreamTaskStateMachine())
        self.request = request
        self.createdAt = Date()
        self.context = context
        // An intercepted CONNECT opens nothing upstream; each request inside is a task that does.
        let tunnel: any TunnelTransport =
            request.intercepted
            ? context.transport.openInterceptedConnection(eventLoop: eventLoop, delegate: self)
            : context.transport.openTunnel(
                host: request.host, port: request.port, eventLoop: eventLoop, destinations: context.destinations(),
                delegate: self, throttle: context.throttleTicket(task: id, host: request.host), upgrade: upgrade)
        self.tunnel.withLock { $0 = tunnel }
        if request.intercepted { self.recorded.withLock { $0.status = 200 } }
    }

    private var transfer: any TunnelTransport { self.tunnel.withLock { $0! } }

    /// Succeeds once the upstream connection is open: the caller answers 200 and attaches the
    /// client. Fails with a `TaskFailure` whose `httpStatus` is the answer (502 refused or
    /// unreachable, 504 timeout, 503 canceled).
    package var established: EventLoopFuture<Void> { self.transfer.established }

    /// On the event loop, once registered and `created` published: starts connecting upstream,
    /// or waits as held.
    func begin() {
        self.perform(self.machine.withLock { $0.begin() })
    }

    package var kind: TaskKind { .stream }

    package var state: TaskState { self.machine.withLock { $0.state } }

    package var bytesUp: Int64 { self.transfer.bytesUp }
    package var bytesDown: Int64 { self.transfer.bytesDown }

    /// The task as the control API shows it, now. Both totals are unknown: a tunnel ends when
    /// one side closes.
    package func record() -> TaskRecord {
        let (state, heldBy) = self.machine.withLock { ($0.state, $0.heldBy) }
        let recorded = self.recorded.withLock { $0 }
        let failure = recorded.end?.failure
        return TaskRecord(
            id: self.id, kind: .stream, state: state, method: self.request.method,
            url: self.request.url, client: self.request.client, createdAt: self.createdAt,
            status: recorded.status, error: failure?.message, errorCode: failure?.code,
            upload: TransferProgress(completed: self.bytesUp), download: TransferProgress(completed: self.bytesDown),
            metrics: recorded.metrics, requestHeaders: self.request.headers, responseHeaders: nil,
            endReason: recorded.end?.reason, proxyUser: self.request.proxyUser,
            limit: self.context.throttler.limit(task: self.id, host: self.request.host), heldBy: heldBy,
            clientProcess: self.request.process?.process, parent: self.request.parent,
            requests: self.request.intercepted ? recorded.requests : nil, relay: recorded.relay)
    }

    // MARK: an intercepted connection (on its event loop)

    /// A request read inside the intercepted connection became a task.
    package func carriedRequest() {
        self.recorded.withLock { $0.requests += 1 }
    }

    /// The client's TLS handshake with afproxy completed after `milliseconds` (the task's `tls`
    /// phase: afproxy's side; each request's own shows the origin's).
    package func clientHandshakeCompleted(milliseconds: Double) {
        self.recorded.withLock { $0.metrics.tlsMs = milliseconds }
    }

    /// The client's TLS handshake failed (`TaskFailure.clientTLSFailed`): the connection closes
    /// and the task ends with `failure`.
    package func clientHandshakeFailed(_ failure: TaskFailure) {
        self.transfer.cancel(failure)
    }

    // MARK: the client connection (on its event loop)

    /// The client's side joins the relay once its 200 is written; false if the tunnel is over
    /// (the caller closes the client). The caller then removes what holds reads in front of the
    /// relay and calls `channel.read()`.
    package func attachClient(_ channel: any Channel) -> Bool {
        self.transfer.attachClient(channel)
    }

    /// The client went away before the tunnel was established: the task ends.
    package func clientClosed() {
        self.perform(self.machine.withLock { $0.clientClosed() })
    }

    /// The client half-closed before the 200 (`StreamTaskStateMachine.clientHalfClosed`).
    package func clientHalfClosed(sentBytes: Bool) {
        self.perform(self.machine.withLock { $0.clientHalfClosed(sentBytes: sentBytes) })
    }

    /// Carries out what the machine decided; never called with the machine's lock held.
    func perform(_ action: StreamTaskStateMachine.Action) {
        switch action {
        case .none:
            break
        case .suspend:
            self.transfer.pause()
            self.context.events.publish(.suspended, self.record())
        case .resume:
            self.transfer.resume()
            self.context.events.publish(.resumed, self.record())
        case .abort(let failure):
            self.transfer.cancel(failure)
        case .start:
            self.started.store(NIODeadline.now().uptimeNanoseconds, ordering: .relaxed)
            self.transfer.start()
        case .hold:
            self.context.events.publish(.held, self.record())
        case .release(let start):
            if start {
                self.started.store(NIODeadline.now().uptimeNanoseconds, ordering: .relaxed)
                // The release comes from a verb's thread; the transport starts on its loop.
                let transfer = self.transfer
                self.eventLoop.execute { transfer.start() }
            }
            self.context.events.publish(.resumed, self.record())
        case .finish(let end):
            let now = self.millisecondsSinceStart()
            self.recorded.withLock { recorded in
                recorded.end = end
                recorded.metrics.totalMs = now
            }
            self.context.completed(self)
        }
    }

    private func millisecondsSinceStart() -> Double {
        let started = NIODeadline.uptimeNanoseconds(self.started.load(ordering: .relaxed))
        return Double((NIODeadline.now() - started).nanoseconds) / 1_000_000
    }
}

// MARK: - ManagedTask (any thread)

extension StreamTask: MachineDrivenTask {}

// MARK: - TunnelTransferDelegate (the event loop)

extension StreamTask: TunnelTransferDelegate {
    package func tunnelDidConnect(_ connection: TunnelConnection) {
        self.recorded.withLock { recorded in
            if self.request.upgrade == nil { recorded.status = 200 }
            recorded.metrics.dnsMs = connection.dnsMs
            recorded.metrics.connectMs = connection.connectMs
            recorded.metrics.remoteAddress = connection.remoteAddress
            recorded.metrics.reusedConnection = false
            recorded.relay = .nio
        }
    }

    package func tunnelDidSplice() {
        self.recorded.withLock { $0.relay = .splice }
    }

    package func tunnelDidReceiveAnswer(status: Int?) {
        self.recorded.withLock { $0.status = status }
    }

    package func tunnelDidReceiveFirstByte() {
        let now = self.millisecondsSinceStart()
        self.recorded.withLock { $0.metrics.ttfbMs = now }
    }

    package func tunnelDidComplete(_ end: TunnelEnd) {
        self.perform(self.machine.withLock { $0.complete(end) })
    }
}

import AFProxyCurl
import AFProxyModel
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// The event-loop side of one stream task: connects upstream, glues the upstream channel to the
/// client's, and applies what `TunnelLifecycle` answers to what the two channels report.
/// Loop-confined: every method runs on the client connection's event loop.
final class TunnelRelay {
    private enum Phase {
        case idle
        case connecting(TunnelConnector)
        /// Upstream is open; the client joins once its 200 is written.
        case connected
        case relaying
        case finished
    }

    private var phase = Phase.idle
    private var lifecycle = TunnelLifecycle()
    /// Held until the tunnel is over, which breaks the cycle task → relay → task.
    private var task: StreamTask?
    private let counters: TunnelCounters
    private let established: EventLoopPromise<Void>
    private var client: TunnelGlue?
    private var upstream: TunnelGlue?
    /// A cancel that came while connecting: the reason the task records.
    private var cancelReason: String?
    private var eventLoop: (any EventLoop)?
    private var idleLimit: Duration?
    private var idleTimer: TunnelIdleTimer?
    /// The next idle check; canceled when the tunnel ends, so the relay is not kept alive by it.
    private var idleCheck: Scheduled<Void>?

    init(counters: TunnelCounters, established: EventLoopPromise<Void>) {
        self.counters = counters
        self.established = established
    }

    func start(
        _ task: StreamTask, timeout: Duration, idleTimeout: Duration?, started: NIODeadline, eventLoop: any EventLoop
    ) {
        guard case .idle = self.phase else { return }
        self.task = task
        self.eventLoop = eventLoop
        self.idleLimit = idleTimeout
        let connector = TunnelConnector(
            host: task.request.host, port: task.request.port, timeout: timeout, eventLoop: eventLoop, started: started)
        self.phase = .connecting(connector)
        connector.start { [self] result in self.connectDidFinish(result) }
    }

    private func connectDidFinish(_ result: Result<TunnelConnector.Connected, UpstreamFailure>) {
        guard case .connecting = self.phase else { return }
        switch result {
        case .failure(let failure):
            let failure = self.cancelReason.map { UpstreamFailure(.canceled, $0) } ?? failure
            self.finish(TunnelEnd(reason: failure.message, error: failure.message), failing: failure)
        case .success(let connected):
            let glue = TunnelGlue(side: .upstream, relay: self, counters: self.counters)
            do {
                try connected.channel.pipeline.syncOperations.addHandler(glue)
            } catch {
                connected.channel.close(promise: nil)
                let failure = UpstreamFailure(.upstreamBroken, "upstream connection unusable: \(error)")
                self.finish(TunnelEnd(reason: failure.message, error: failure.message), failing: failure)
                return
            }
            self.upstream = glue
            self.phase = .connected
            self.task?.didConnect(connected)
            self.established.succeed()
        }
    }

    /// The client's side joins; answers false if the tunnel is over or the client gone (the
    /// caller closes it). Its bytes flow once the caller removed what holds reads in front of the
    /// glue and called `channel.read()`.
    func attachClient(_ channel: any Channel) -> Bool {
        guard case .connected = self.phase, let upstream = self.upstream else { return false }
        guard channel.isActive else {
            self.cancel(reason: "canceled: client closed the connection")
            return false
        }
        let glue = TunnelGlue(side: .client, relay: self, counters: self.counters)
        do {
            if let options = channel.syncOptions {
                // The client's half-close must reach us as an event to pass on, not as a close.
                try options.setOption(.allowRemoteHalfClosure, value: true)
                try TunnelBuffers.apply(to: options)
            }
            try channel.pipeline.syncOperations.addHandler(glue)
        } catch {
            self.cancel(reason: "canceled: client connection unusable")
            return false
        }
        glue.partner = upstream
        upstream.partner = glue
        self.client = glue
        self.phase = .relaying
        upstream.release()
        if let limit = self.idleLimit {
            self.idleTimer = TunnelIdleTimer(limit: limit, now: .now)
            self.scheduleIdleCheck()
        }
        return true
    }

    // MARK: idle timeout

    private func scheduleIdleCheck() {
        guard let eventLoop = self.eventLoop, let timer = self.idleTimer else { return }
        let relay = NIOLoopBound(self, eventLoop: eventLoop)
        self.idleCheck = eventLoop.scheduleTask(in: TimeAmount(timer.checkInterval)) { relay.value.checkIdle() }
    }

    private func checkIdle() {
        guard case .relaying = self.phase, var timer = self.idleTimer else { return }
        let total = self.counters.uploaded.load(ordering: .relaxed) + self.counters.downloaded.load(ordering: .relaxed)
        let idle = timer.isIdle(total: total, suspended: self.counters.isSuspended, now: .now)
        self.idleTimer = timer
        if idle {
            self.apply(self.lifecycle.idle(seconds: Int(timer.limit.components.seconds)))
        } else {
            self.scheduleIdleCheck()
        }
    }

    // MARK: verbs (the task hops here)

    func resume() {
        self.client?.release()
        self.upstream?.release()
    }

    func cancel(reason: String) {
        switch self.phase {
        case .idle:
            self.finish(TunnelEnd(reason: reason, error: reason), failing: UpstreamFailure(.canceled, reason))
        case .connecting(let connector):
            self.cancelReason = reason
            connector.cancel()
        case .connected:
            self.upstream?.close()
            self.finish(TunnelEnd(reason: reason, error: reason))
        case .relaying:
            self.apply(self.lifecycle.cancel(reason: reason))
        case .finished:
            break
        }
    }

    // MARK: reports of the glue

    func inputClosed(_ side: TunnelLifecycle.Side) {
        guard case .relaying = self.phase else { return }
        self.apply(self.lifecycle.inputClosed(side))
    }

    func channelClosed(_ side: TunnelLifecycle.Side) {
        switch self.phase {
        case .relaying:
            self.apply(self.lifecycle.channelClosed(side))
        case .connected:
            self.finish(TunnelEnd(reason: "\(side.rawValue) closed"))
        default:
            break
        }
    }

    func failed(_ side: TunnelLifecycle.Side, _ error: any Error) {
        guard case .relaying = self.phase else { return }
        let message: String
        if let error = error as? IOError {
            message = String(cString: strerror(error.errnoCode))
        } else {
            message = "\(error)"
        }
        self.apply(self.lifecycle.failed(side, message))
    }

    func upstreamSentFirstByte() {
        self.task?.didReceiveFirstByte()
    }

    private func apply(_ action: TunnelLifecycle.Action) {
        switch action {
        case .none:
            break
        case .passEndOfInput(let side):
            self.glue(side)?.shutdownOutputAfterWrites()
        case .close(let side):
            self.glue(side)?.closeAfterWrites()
        case .closeBoth:
            self.client?.close()
            self.upstream?.close()
        case .finish(let end):
            self.finish(end)
        }
    }

    private func glue(_ side: TunnelLifecycle.Side) -> TunnelGlue? {
        side == .client ? self.client : self.upstream
    }

    /// Records the end once; `failing` when the tunnel was never established.
    private func finish(_ end: TunnelEnd, failing failure: UpstreamFailure? = nil) {
        if case .finished = self.phase { return }
        self.phase = .finished
        self.idleCheck?.cancel()
        self.idleCheck = nil
        if let failure { self.established.fail(failure) }
        self.task?.complete(end)
        self.task = nil
        self.client?.partner = nil
        self.upstream?.partner = nil
        self.client = nil
        self.upstream = nil
    }
}

import AFProxyModel
import AFProxyRules
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// The event-loop side of one `TunnelTransfer`: connects upstream, glues the upstream channel to
/// the client's, applies what `TunnelLifecycle` answers to what the two channels report, and
/// reports to the delegate. Loop-confined: every method runs on the client connection's event
/// loop.
final class TunnelRelay: SpliceRelayOwner {
    private enum Phase {
        case idle
        case connecting(TunnelConnector)
        /// Connected; the TLS handshake with the origin (`TunnelUpgrade.tls`) is under way.
        case securing(any Channel)
        /// Upstream is open; the client joins once its 200 is written.
        case connected
        case relaying
        case finished
    }

    private var phase = Phase.idle
    private var lifecycle = TunnelLifecycle()
    /// Held until the tunnel is over, which breaks the cycle task → transfer → relay → task.
    private var delegate: (any TunnelTransferDelegate)?
    private let host: String
    private let port: Int
    private let counters: TunnelCounters
    private let established: EventLoopPromise<Void>
    private var client: TunnelGlue?
    private var upstream: TunnelGlue?
    /// A cancel that came while connecting: the failure the task records.
    private var cancelFailure: TaskFailure?
    private let eventLoop: any EventLoop
    private let connectTimeout: Duration
    private let destinations: DestinationPolicy
    private let liveUpstreamProxy: LiveUpstreamProxy?
    private let idleLimit: Duration?
    private var idleTimer: TunnelIdleTimer?
    /// The next idle check; canceled when the tunnel ends, so the relay is not kept alive by it.
    private var idleCheck: Scheduled<Void>?
    private let throttle: ThrottleTicket?
    private let upgrade: TunnelUpgrade?
    /// The origin's answer to an upgrade request, until its status line has been read.
    private var answer: UpgradeAnswer?
    /// The kernel relay, while it moves this tunnel's bytes (see `beginSplice`).
    private var splice: SpliceRelay?
    /// Whether the kernel relay may take the tunnel over (`tunnel-splice`).
    private let spliceAllowed: Bool
    /// When it does, and when it gives the tunnel back: bulk starts and ends (`TunnelSpliceGate`).
    private var gate = TunnelSpliceGate(allowed: false)
    /// The directions the kernel relay handed back to NIO since it started.
    private var handedBack: Set<TunnelLifecycle.Side> = []
    /// The first byte from upstream was reported (by NIO, or by the kernel relay after a switch).
    private var sawFirstByte = false

    init(
        host: String, port: Int, counters: TunnelCounters, established: EventLoopPromise<Void>,
        delegate: any TunnelTransferDelegate, connectTimeout: Duration, idleTimeout: Duration?,
        eventLoop: any EventLoop,
        destinations: DestinationPolicy = .open,
        throttle: ThrottleTicket? = nil, upgrade: TunnelUpgrade? = nil, liveUpstreamProxy: LiveUpstreamProxy? = nil,
        splice: Bool = true
    ) {
        self.spliceAllowed = splice
        self.upgrade = upgrade
        self.answer = upgrade.map { _ in UpgradeAnswer() }
        self.destinations = destinations
        self.liveUpstreamProxy = liveUpstreamProxy
        self.throttle = throttle
        self.host = host
        self.port = port
        self.counters = counters
        self.established = established
        self.delegate = delegate
        self.connectTimeout = connectTimeout
        self.idleLimit = idleTimeout
        self.eventLoop = eventLoop
    }

    func start() {
        guard case .idle = self.phase else { return }
        let connector = TunnelConnector(
            host: self.host, port: self.port, timeout: self.connectTimeout, eventLoop: self.eventLoop,
            // From now, not from the task's creation: a tunnel held by a rule connects only once
            // released, and its connect timeout is the connect's own.
            started: .now(), destinations: self.destinations, liveUpstreamProxy: self.liveUpstreamProxy)
        self.phase = .connecting(connector)
        connector.start { [self] result in self.connectDidFinish(result) }
    }

    private func connectDidFinish(_ result: Result<TunnelConnector.Connected, TaskFailure>) {
        guard case .connecting = self.phase else { return }
        switch result {
        case .failure(let failure):
            self.finish(TunnelEnd(self.cancelFailure ?? failure), failing: true)
        case .success(let connected):
            if let tls = self.upgrade?.tls {
                self.secure(connected, tls)
            } else {
                self.didEstablish(connected)
            }
        }
    }

    /// Adds the origin's TLS client side and waits for its handshake, for as long as a connect
    /// may take; the tunnel is established only once the origin verified.
    private func secure(_ connected: TunnelConnector.Connected, _ tls: TunnelTLS) {
        let channel = connected.channel
        self.phase = .securing(channel)
        let relay = NIOLoopBound(self, eventLoop: self.eventLoop)
        let timeout = self.eventLoop.scheduleTask(in: TimeAmount(self.connectTimeout)) {
            relay.value.secured(
                connected, .failure(ChannelError.connectTimeout(TimeAmount(relay.value.connectTimeout))))
        }
        do {
            let pipeline = channel.pipeline.syncOperations
            for handler in try tls.maker.clientHandlers(for: tls) { try pipeline.addHandler(handler) }
            try pipeline.addHandler(
                TLSHandshakeWait { result in
                    timeout.cancel()
                    relay.value.secured(connected, result)
                })
        } catch {
            timeout.cancel()
            self.secured(connected, .failure(error))
        }
    }

    private func secured(_ connected: TunnelConnector.Connected, _ result: Result<Void, any Error>) {
        guard case .securing = self.phase else { return }
        switch result {
        case .success:
            self.didEstablish(connected)
        case .failure(let error):
            connected.channel.close(promise: nil)
            let failure: TaskFailure
            if let canceled = self.cancelFailure {
                failure = canceled
            } else if case .some(.connectTimeout) = error as? ChannelError {
                failure = .connectTimeout("no TLS handshake with \(self.host):\(self.port) within the connect timeout")
            } else {
                failure = self.upgrade?.tls?.maker.failure(for: error, host: self.host) ?? .tlsFailure("\(error)")
            }
            self.finish(TunnelEnd(failure), failing: true)
        }
    }

    private func didEstablish(_ connected: TunnelConnector.Connected) {
        do {
            let glue = TunnelGlue(side: .upstream, relay: self, counters: self.counters, throttle: self.throttle)
            if let recorder = self.upgrade?.recorder { glue.record(with: recorder) }
            try connected.channel.pipeline.syncOperations.addHandler(glue)
            // The origin's first bytes, read with the upstream proxy's answer: from the pipeline's
            // head (through TLS, if any) to the glue, which holds them until the client joins.
            if let leftover = connected.leftover {
                connected.channel.pipeline.syncOperations.fireChannelRead(NIOAny(leftover))
            }
            self.upstream = glue
        } catch {
            connected.channel.close(promise: nil)
            self.finish(TunnelEnd(.upstreamBroken("upstream connection unusable: \(error)")), failing: true)
            return
        }
        self.phase = .connected
        self.delegate?.tunnelDidConnect(
            TunnelConnection(
                dnsMs: connected.dnsMs, connectMs: connected.connectMs, remoteAddress: connected.remoteAddress))
        self.established.succeed()
    }

    /// The client's side joins; answers false if the tunnel is over or the client gone (the
    /// caller closes it). Its bytes flow once the caller removed what holds reads in front of the
    /// glue and called `channel.read()`.
    func attachClient(_ channel: any Channel) -> Bool {
        guard case .connected = self.phase, let upstream = self.upstream else { return false }
        guard channel.isActive else {
            self.cancel(.clientClosed("canceled: client closed the connection"))
            return false
        }
        let glue = TunnelGlue(side: .client, relay: self, counters: self.counters, throttle: self.throttle)
        if let recorder = self.upgrade?.recorder { glue.record(with: recorder) }
        // An upgrade's client waits for the origin's answer: what it sends before the 101 (a
        // request pipelined behind its handshake) must not reach the origin unseen.
        if self.awaitsAnswer { glue.waitForAnswer() }
        do {
            if let options = channel.syncOptions {
                // The client's half-close must reach us as an event to pass on, not as a close.
                try options.setOption(.allowRemoteHalfClosure, value: true)
                try TunnelBuffers.apply(to: options)
            }
            try channel.pipeline.syncOperations.addHandler(glue)
        } catch {
            self.cancel(.clientClosed("canceled: client connection unusable"))
            return false
        }
        glue.partner = upstream
        upstream.partner = glue
        self.client = glue
        self.phase = .relaying
        upstream.release()
        if let head = self.upgrade?.head { upstream.send(head) }
        if let limit = self.idleLimit {
            self.idleTimer = TunnelIdleTimer(limit: limit, now: .now)
            self.scheduleIdleCheck()
        }
        self.gate = TunnelSpliceGate(allowed: self.spliceAllowed && self.upgrade == nil)
        self.watchForBulk()
        return true
    }

    // MARK: the kernel relay

    /// NIO passed on one read from `side` (only while the gate watches).
    func relayed(_ count: Int, filled: Bool, from side: TunnelLifecycle.Side) {
        guard self.gate.relayed(count, filled: filled, from: side) == .startSplice else { return }
        self.watchForBulk()
        // After the read batch under way: what it reads still goes through NIO.
        let relay = NIOLoopBound(self, eventLoop: self.eventLoop)
        self.eventLoop.execute { relay.value.beginSplice() }
    }

    private func watchForBulk() {
        self.client?.watchesForBulk = self.gate.isWatching
        self.upstream?.watchesForBulk = self.gate.isWatching
    }

    /// A tunnel whose bytes afproxy need not see (no upgrade, whose answer it reads and whose
    /// messages a record rule may read: `WebSocketRecorder`) moves them with splice(2) once it
    /// carries bulk and both channels expose their sockets. Through an upstream proxy too: its
    /// handshake is over by now, its handler gone from the pipeline, and what it sent after its
    /// answer went to the client through NIO, so the socket carries the origin's bytes only. NIO
    /// stops reading both, then what it had queued on each goes out; only then does the kernel
    /// take over, so no spliced byte overtakes a byte NIO had in hand.
    private func beginSplice() {
        guard case .relaying = self.phase, let client = self.client, let upstream = self.upstream, self.upgrade == nil,
            Self.socket(of: client) != nil, Self.socket(of: upstream) != nil,
            let clientWrites = client.queuedWritesDone(), let upstreamWrites = upstream.queuedWritesDone()
        else {
            self.gate.spliceUnavailable()
            return
        }
        client.enterSplice()
        upstream.enterSplice()
        let relay = NIOLoopBound(self, eventLoop: self.eventLoop)
        clientWrites.and(upstreamWrites).whenComplete { _ in relay.value.startSplice() }
    }

    private func startSplice() {
        guard case .relaying = self.phase, let client = self.client, let upstream = self.upstream else {
            self.gate.spliceUnavailable()
            return
        }
        if !client.isClean || !upstream.isClean {
            // Not now: NIO read a half-close (and what came before it) meanwhile.
            self.gate.spliceDeferred()
        } else if let clientSocket = Self.socket(of: client), let upstreamSocket = Self.socket(of: upstream),
            let splice = SpliceRelay(
                client: clientSocket, upstream: upstreamSocket, owner: self, counters: self.counters,
                throttle: self.throttle, eventLoop: self.eventLoop)
        {
            self.splice = splice
            self.handedBack = []
            if splice.start() {
                self.gate.spliceStarted()
                self.delegate?.tunnelDidSplice()
                return
            }
            self.splice = nil
            self.gate.spliceUnavailable()
        } else {
            self.gate.spliceUnavailable()
        }
        // The tunnel stays on NIO.
        client.leaveSplice()
        upstream.leaveSplice()
        self.watchForBulk()
    }

    /// The socket under a glue's channel; nil where the channel has none (tests' embedded
    /// channels). Used beyond the closure: the relay stops using it before NIO closes it.
    private static func socket(of glue: TunnelGlue) -> Int32? {
        guard let channel = glue.channelIfActive else { return nil }
        return try? channel.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) {
            $0
        }
    }

    /// NIO read bytes or the end of input from a spliced side (at its peer's half-close).
    func nioReadWhileSpliced(_ side: TunnelLifecycle.Side) {
        self.splice?.nioTookInput(side)
    }

    /// The direction from `side` emptied its pipe after its input ended (a half-close), or the
    /// bulk is over: NIO carries on. Once both are back after the bulk, the kernel relay goes and
    /// the gate watches for the next bulk.
    func spliceHandedBack(_ side: TunnelLifecycle.Side) {
        self.handedBack.insert(side)
        self.glue(side)?.leaveSplice()
        guard self.gate.state == .leaving, self.handedBack.count == 2 else { return }
        self.stopSplice()
        self.gate.spliceLeft()
        self.watchForBulk()
    }

    /// The kernel relay moved `count` bytes; enough small splices in a row end the bulk.
    func spliceFilled(_ count: Int, throttled: Bool) {
        guard self.gate.spliced(count, throttled: throttled) == .leaveSplice else { return }
        self.splice?.handBackAll()
    }

    private func stopSplice() {
        self.splice?.stop()
        self.splice = nil
    }

    // MARK: idle timeout

    private func scheduleIdleCheck() {
        guard let timer = self.idleTimer else { return }
        let relay = NIOLoopBound(self, eventLoop: self.eventLoop)
        self.idleCheck = self.eventLoop.scheduleTask(in: TimeAmount(timer.checkInterval)) { relay.value.checkIdle() }
    }

    private func checkIdle() {
        guard case .relaying = self.phase, var timer = self.idleTimer else { return }
        let total = self.counters.uploaded.load(ordering: .relaxed) + self.counters.downloaded.load(ordering: .relaxed)
        let idle = timer.isIdle(total: total, suspended: self.counters.isPaused, now: .now)
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
        self.splice?.kick()
    }

    func cancel(_ failure: TaskFailure) {
        switch self.phase {
        case .idle:
            self.finish(TunnelEnd(failure), failing: true)
        case .connecting(let connector):
            self.cancelFailure = failure
            connector.cancel()
        case .securing(let channel):
            self.cancelFailure = failure
            channel.close(promise: nil)
        case .connected:
            self.upstream?.close()
            self.finish(TunnelEnd(failure))
        case .relaying:
            self.apply(self.lifecycle.cancel(failure))
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
        self.splice?.sideClosed(side)
        self.splice = nil
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
        guard !self.sawFirstByte else { return }
        self.sawFirstByte = true
        self.delegate?.tunnelDidReceiveFirstByte()
    }

    /// An upgrade's origin has not finished its answer's status line yet.
    var awaitsAnswer: Bool { self.answer?.outcome == .pending }

    /// The origin's first bytes after an upgrade request, before they go to the client. A 101
    /// switches protocols and the relay goes on both ways; any other answer (or none that reads
    /// as HTTP) is the client's last: it reaches the client, and nothing more of the client's
    /// goes upstream, where it would be a request no task sees. The origin hears the end of
    /// input, answers and closes, and the tunnel closes behind its answer.
    func readAnswer(_ bytes: ByteBuffer) {
        guard var answer = self.answer else { return }
        let outcome = answer.read(bytes.readableBytesView)
        self.answer = answer
        switch outcome {
        case .pending:
            return
        case .status(let status):
            self.delegate?.tunnelDidReceiveAnswer(status: status)
            if status == 101 {
                self.client?.answerArrived()
                return
            }
        case .malformed:
            self.delegate?.tunnelDidReceiveAnswer(status: nil)
        }
        self.client?.stopInput()
        self.apply(self.lifecycle.inputClosed(.client))
    }

    private func apply(_ action: TunnelLifecycle.Action) {
        switch action {
        case .none:
            break
        case .passEndOfInput(let side):
            self.glue(side)?.shutdownOutputAfterWrites()
        case .close(let side):
            self.stopSplice()
            self.glue(side)?.closeAfterWrites()
        case .closeBoth:
            self.stopSplice()
            self.client?.close()
            self.upstream?.close()
        case .finish(let end):
            self.finish(end)
        }
    }

    private func glue(_ side: TunnelLifecycle.Side) -> TunnelGlue? {
        side == .client ? self.client : self.upstream
    }

    /// Reports the end once; `failing` when the tunnel was never established.
    private func finish(_ end: TunnelEnd, failing: Bool = false) {
        if case .finished = self.phase { return }
        self.phase = .finished
        self.stopSplice()
        self.idleCheck?.cancel()
        self.idleCheck = nil
        if failing { self.established.fail(end.failure ?? .upstreamBroken(end.reason)) }
        let delegate = self.delegate
        self.delegate = nil
        delegate?.tunnelDidComplete(end)
        self.client?.partner = nil
        self.upstream?.partner = nil
        self.client = nil
        self.upstream = nil
    }
}

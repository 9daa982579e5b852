import AFProxyModel
import AFProxyRules
import NIOCore

/// The transport of one CONNECT tunnel, beside curl's `UpstreamTransfer`: it opens the upstream
/// connection and relays bytes between it and the client's channel (`TunnelRelay`), and reports
/// to its `TunnelTransferDelegate`. It decides nothing about the task: the task's verbs arrive
/// here as `pause()`, `resume()` and `cancel(_:)`.
///
/// Why NIO rather than curl's CONNECT_ONLY with `curl_easy_send`/`recv`: a curl relay would hop
/// every chunk between the session thread and the client's event loop and copy it twice (into
/// curl's buffer and out of it). The upstream channel here lives on the client's own event loop,
/// so a chunk read on one socket is queued on the other as the same buffer. TLS is end to end
/// between the client and the origin; the tunnel never sees it.
///
/// Made, started and attached on `eventLoop`; `pause`, `resume`, `cancel` and the byte counts
/// from any thread.
package final class TunnelTransfer: Sendable {
    /// Succeeds once the upstream connection is open: the caller answers 200 and attaches the
    /// client. Fails with a `TaskFailure` whose `httpStatus` is the answer.
    package let established: EventLoopFuture<Void>
    private let eventLoop: any EventLoop
    private let counters = TunnelCounters()
    private let relay: NIOLoopBound<TunnelRelay>

    /// On `eventLoop`. `connectTimeout` bounds the lookup and every connect attempt together;
    /// `idleTimeout` closes a tunnel through which no byte moved for that long; `liveUpstreamProxy`
    /// says whether it goes through `upstream-proxy`; `splice: false` keeps every byte on the NIO
    /// relay (`tunnel-splice = no`).
    package init(
        host: String, port: Int, eventLoop: any EventLoop, connectTimeout: Duration, idleTimeout: Duration?,
        destinations: DestinationPolicy = .open, delegate: any TunnelTransferDelegate,
        throttle: ThrottleTicket? = nil, upgrade: TunnelUpgrade? = nil, liveUpstreamProxy: LiveUpstreamProxy? = nil,
        splice: Bool = true
    ) {
        self.eventLoop = eventLoop
        let promise = eventLoop.makePromise(of: Void.self)
        self.established = promise.futureResult
        let relay = TunnelRelay(
            host: host, port: port, counters: self.counters, established: promise, delegate: delegate,
            connectTimeout: connectTimeout, idleTimeout: idleTimeout, eventLoop: eventLoop, destinations: destinations,
            throttle: throttle, upgrade: upgrade, liveUpstreamProxy: liveUpstreamProxy, splice: splice)
        self.relay = NIOLoopBound(relay, eventLoop: eventLoop)
    }

    /// On `eventLoop`: starts connecting upstream.
    package func start() {
        self.relay.value.start()
    }

    /// On `eventLoop`: the client's side joins the relay once its 200 is written; false if the
    /// tunnel is over (the caller closes the client). The caller then removes what holds reads
    /// in front of the relay and calls `channel.read()`.
    package func attachClient(_ channel: any Channel) -> Bool {
        self.relay.value.attachClient(channel)
    }

    package var bytesUp: Int64 { self.counters.uploaded.load(ordering: .relaxed) }
    package var bytesDown: Int64 { self.counters.downloaded.load(ordering: .relaxed) }

    /// Both directions stop at once for the counts: from here the relay holds what it reads and
    /// lets no further `read()` through (no hop needed, it checks on every chunk).
    package func pause() {
        self.counters.setPaused(true)
    }

    package func resume() {
        self.counters.setPaused(false)
        let relay = self.relay
        self.eventLoop.execute { relay.value.resume() }
    }

    /// Closes both sides; the delegate's completion records `failure`.
    package func cancel(_ failure: TaskFailure) {
        let relay = self.relay
        self.eventLoop.execute { relay.value.cancel(failure) }
    }
}

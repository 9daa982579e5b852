/// When a plain tunnel leaves the NIO relay for the kernel's (`SpliceRelay`), as a plain value:
/// the relay tells it what NIO moved and how a switch went, it answers whether to start one.
///
/// Why not splice at once: each spliced wake-up costs a hop through `SpliceWatcher`'s thread,
/// an epoll re-arm and a splice call into and out of a pipe, which a request-sized exchange
/// pays in full and bulk spreads over megabytes. So every tunnel starts on NIO, where a small
/// exchange costs one read and one write, and is spliced once one direction carries bulk: reads
/// that fill their whole buffer (the socket held more than NIO asked for) one after the other,
/// `bulkBytes` of them. A read that does not fill its buffer ends the run: a stream of answers
/// that each fit one read never switches, whatever it adds up to.
///
/// A switch that did not happen (NIO read the end of input or held bytes meanwhile) lets the
/// tunnel try again after another run; one that cannot happen (no socket, no pipe, no watcher)
/// stops the watching. Once spliced, a tunnel stays spliced: going back would cost what
/// splicing saves.
package struct TunnelSpliceGate: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        /// On NIO, counting each direction's run of full reads.
        case watching
        /// A switch is under way (NIO's queued writes go out first).
        case switching
        case spliced
        /// Not this tunnel: splicing is off, its bytes are read (an upgrade), or it failed.
        case off
    }

    package enum Action: Sendable, Equatable {
        case none
        /// Stop NIO's reads on both sides, let its writes out, then splice.
        case startSplice
    }

    /// Bytes of full reads in a row, in one direction, that make a tunnel bulk. Four reads at
    /// NIO's largest buffer (`TunnelBuffers`), far beyond any request-sized exchange.
    package static let bulkBytes = 1 << 20

    package private(set) var state: State
    private var runFromClient = 0
    private var runFromUpstream = 0
    private let threshold: Int

    /// `allowed`: the tunnel may be spliced at all (`tunnel-splice`, no upgrade).
    package init(allowed: Bool, bulkBytes: Int = Self.bulkBytes) {
        self.state = allowed ? .watching : .off
        self.threshold = bulkBytes
    }

    /// Whether the relay reports reads at all.
    package var isWatching: Bool { self.state == .watching }

    /// NIO passed on one read of `count` bytes from `side`; `filled`: it filled its buffer.
    package mutating func relayed(_ count: Int, filled: Bool, from side: TunnelLifecycle.Side) -> Action {
        guard self.state == .watching else { return .none }
        let run = filled ? self.run(side) + count : 0
        if side == .client { self.runFromClient = run } else { self.runFromUpstream = run }
        guard run >= self.threshold else { return .none }
        self.state = .switching
        return .startSplice
    }

    /// The kernel relay took over.
    package mutating func spliceStarted() {
        if self.state == .switching { self.state = .spliced }
    }

    /// Not now: NIO held bytes or an end of input when the switch came; watch for another run.
    package mutating func spliceDeferred() {
        guard self.state == .switching else { return }
        self.state = .watching
        self.runFromClient = 0
        self.runFromUpstream = 0
    }

    /// Not on this tunnel: no socket, no pipe, no watcher, or the tunnel is over.
    package mutating func spliceUnavailable() {
        self.state = .off
    }

    private func run(_ side: TunnelLifecycle.Side) -> Int {
        side == .client ? self.runFromClient : self.runFromUpstream
    }
}

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
/// stops the watching. A spliced tunnel whose bulk is over goes back the same way: after
/// `smallFillsToLeave` splices in a row that each moved less than `smallFill` (request-sized
/// exchanges again, or a trickle), both directions hand their input back to NIO once their pipes
/// are empty, and the watching starts over.
package struct TunnelSpliceGate: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        /// On NIO, counting each direction's run of full reads.
        case watching
        /// A switch is under way (NIO's queued writes go out first).
        case switching
        case spliced
        /// Going back to NIO: the pipes empty, then each direction is handed back.
        case leaving
        /// Not this tunnel: splicing is off, its bytes are read (an upgrade), or it failed.
        case off
    }

    package enum Action: Sendable, Equatable {
        case none
        /// Stop NIO's reads on both sides, let its writes out, then splice.
        case startSplice
        /// No more fills; hand each direction back to NIO once its pipe is empty.
        case leaveSplice
    }

    /// Bytes of full reads in a row, in one direction, that make a tunnel bulk. Four reads at
    /// NIO's largest buffer (`TunnelBuffers`), far beyond any request-sized exchange.
    package static let bulkBytes = 1 << 20
    /// A splice that moves less than this is a request-sized one.
    package static let smallFill = 16 << 10
    /// Small splices in a row, both directions together, that end the bulk: 16 exchanges.
    package static let smallFillsToLeave = 32

    package private(set) var state: State
    private var runFromClient = 0
    private var runFromUpstream = 0
    private var smallFills = 0
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
        guard self.state == .switching else { return }
        self.state = .spliced
        self.smallFills = 0
    }

    /// The kernel relay moved `count` bytes into a pipe. `throttled`: a throttle rule sized the
    /// splice, so its size says nothing of the traffic.
    package mutating func spliced(_ count: Int, throttled: Bool = false) -> Action {
        guard self.state == .spliced else { return .none }
        self.smallFills = count < Self.smallFill && !throttled ? self.smallFills + 1 : 0
        guard self.smallFills >= Self.smallFillsToLeave else { return .none }
        self.state = .leaving
        return .leaveSplice
    }

    /// Both directions are NIO's again and the kernel relay is gone: watch for bulk anew.
    package mutating func spliceLeft() {
        guard self.state == .leaving else { return }
        self.state = .watching
        self.runFromClient = 0
        self.runFromUpstream = 0
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

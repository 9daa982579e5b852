import AFProxyRules
import CSplice
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The kernel relay of a plain CONNECT tunnel: bytes move from one socket into a pipe and from
/// the pipe into the other socket with `splice(2)`, never through user space, one pipe per
/// direction. Each direction is a `SplicePump`, which says what to do next; `SpliceWatcher`
/// says when a socket is ready.
///
/// NIO keeps owning both sockets (it closes them) and stays registered for them; while spliced,
/// the glue lets no `read()` through and `autoRead` is off, so NIO reads a socket only at its
/// peer's half-close or reset, when it reads to the end whatever was asked. What it reads then
/// stays in the glue; its direction stops filling, empties its pipe, and hands the rest to the
/// glue (`TunnelGlue.leaveSplice`), which forwards it through NIO: every call runs on the
/// tunnel's event loop, so what NIO read is later in the stream than anything the pipe holds.
/// The relay stops using a socket before anyone closes it (`stop`), or when NIO closed it
/// (`sideClosed`): the number may then be another socket's.
///
/// Loop-confined.
final class SpliceRelay {
    /// What a pipe asks the kernel for: large reads and writes, few wake-ups, at most this much
    /// held per direction.
    static let pipeSize = 1 << 20
    /// Splice calls per loop turn before the relay yields to the loop's other channels.
    private static let callsPerTurn = 32

    private let eventLoop: any EventLoop
    private let watcher: SpliceWatcher
    private let tunnel: UInt64
    /// The sockets, by side; nil once NIO closed it.
    private var sockets: [TunnelLifecycle.Side: Int32]
    /// The pipes, by source side: `[read end, write end]`.
    private var pipes: [TunnelLifecycle.Side: [Int32]]
    private var pumps: [TunnelLifecycle.Side: SplicePump]
    /// What each socket is armed for in the watcher; 0 once its event came.
    private var armed: [TunnelLifecycle.Side: UInt32] = [.client: 0, .upstream: 0]
    /// A throttle bucket in debt holds that direction's fills until its wake.
    private var throttled: Set<TunnelLifecycle.Side> = []
    /// Told of a hand-back, the first byte from upstream and a socket's failure; held until `stop`.
    private var owner: (any SpliceRelayOwner)?
    private let counters: TunnelCounters
    private let throttle: ThrottleTicket?
    private var sawFirstByte = false
    private var scheduled = false
    private var stopped = false

    /// Nil where the kernel relay cannot be had (no watcher, no pipe); the caller stays on NIO.
    init?(
        client: Int32, upstream: Int32, owner: any SpliceRelayOwner, counters: TunnelCounters,
        throttle: ThrottleTicket?, eventLoop: any EventLoop
    ) {
        guard let watcher = SpliceWatcher.shared else { return nil }
        var pipes: [TunnelLifecycle.Side: [Int32]] = [:]
        var pumps: [TunnelLifecycle.Side: SplicePump] = [:]
        for side in TunnelLifecycle.Side.allCases {
            var fds: [Int32] = [-1, -1]
            let granted = afproxy_splice_pipe(&fds, Int32(Self.pipeSize))
            guard granted > 0 else {
                for fd in pipes.values.joined() { close(fd) }
                return nil
            }
            pipes[side] = fds
            pumps[side] = SplicePump(capacity: Int(granted))
        }
        self.pipes = pipes
        self.pumps = pumps
        self.sockets = [.client: client, .upstream: upstream]
        self.watcher = watcher
        self.owner = owner
        self.counters = counters
        self.throttle = throttle
        self.eventLoop = eventLoop
        let box = NIOLoopBoundBox<SpliceRelay?>(nil, eventLoop: eventLoop)
        self.tunnel = watcher.register { [eventLoop] side, events in
            eventLoop.execute { box.value?.ready(side == 0 ? .client : .upstream, events: events) }
        }
        self.box = box
        box.value = self
    }

    /// Holds the relay for the watcher's events, the throttle's wakes and the next turn; cleared
    /// at `stop`, so that one coming late finds nothing (and the relay is freed).
    private let box: NIOLoopBoundBox<SpliceRelay?>

    /// Registers both sockets and starts moving bytes; false if the watcher refused them (the
    /// caller stays on NIO; nothing was moved).
    func start() -> Bool {
        for side in TunnelLifecycle.Side.allCases {
            guard let fd = self.sockets[side],
                self.watcher.arm(fd, tunnel: self.tunnel, side: Self.bit(side), events: 0, add: true)
            else {
                self.stop()
                return false
            }
        }
        self.run()
        return true
    }

    // MARK: events (on the loop)

    private func ready(_ side: TunnelLifecycle.Side, events: UInt32) {
        guard !self.stopped else { return }
        self.armed[side] = 0
        let inbound = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue
        let outbound = EPOLLOUT.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue
        if events & inbound != 0 { self.pumps[side]?.becameReadable() }
        if events & outbound != 0 { self.pumps[side.other]?.becameWritable() }
        self.run()
    }

    /// A resume, or a throttle rule changed: fills may go on.
    func kick() {
        guard !self.stopped else { return }
        self.run()
    }

    /// NIO read from `side` (its peer half-closed or reset): that direction's input is NIO's.
    func nioTookInput(_ side: TunnelLifecycle.Side) {
        guard !self.stopped else { return }
        self.pumps[side]?.nioTookInput()
        self.run()
    }

    /// The tunnel goes back to NIO: no more fills; each direction is handed back once its pipe is
    /// empty (`SpliceRelayOwner.spliceHandedBack`), as at a half-close. Called from the owner's
    /// report of a fill, inside `run`, which goes on with the drains; the kick covers a call
    /// from anywhere else.
    func handBackAll() {
        guard !self.stopped else { return }
        for side in TunnelLifecycle.Side.allCases { self.pumps[side]?.nioTookInput() }
        let box = self.box
        self.eventLoop.execute { box.value?.kick() }
    }

    /// NIO closed `side`'s socket: its number is no longer ours to use.
    func sideClosed(_ side: TunnelLifecycle.Side) {
        self.sockets[side] = nil
        self.stop()
    }

    /// No more splicing: out of the watcher, pipes closed (what they held is dropped: the tunnel
    /// is closing). Before any socket is closed.
    func stop() {
        guard !self.stopped else { return }
        self.stopped = true
        for side in TunnelLifecycle.Side.allCases { self.pumps[side]?.stop() }
        self.watcher.unregister(self.tunnel)
        for fd in self.sockets.values { self.watcher.remove(fd) }
        for fd in self.pipes.values.joined() { close(fd) }
        self.pipes = [:]
        self.box.value = nil
        self.owner = nil
    }

    // MARK: the pumps

    private func run() {
        guard !self.stopped else { return }
        var calls = 0
        while calls < Self.callsPerTurn {
            var progressed = false
            for side in TunnelLifecycle.Side.allCases where !self.stopped {
                if self.step(side) {
                    progressed = true
                    calls += 1
                }
            }
            if !progressed || self.stopped { break }
        }
        guard !self.stopped else { return }
        if calls >= Self.callsPerTurn {
            // More to move: again on the next turn, after the loop's other channels.
            if !self.scheduled {
                self.scheduled = true
                let box = self.box
                self.eventLoop.execute {
                    guard let relay = box.value else { return }
                    relay.scheduled = false
                    relay.run()
                }
            }
            return
        }
        self.arm()
    }

    /// One call for `side`'s direction; false when it has nothing to do now.
    private func step(_ side: TunnelLifecycle.Side) -> Bool {
        guard var pump = self.pumps[side] else { return false }
        let grant = self.grant(side)
        let next = pump.next(paused: self.counters.isPaused, throttled: self.throttled.contains(side), grant: grant)
        self.pumps[side] = pump
        switch next {
        case .wait, .done:
            return false
        case .handBack:
            self.owner?.spliceHandedBack(side)
            return true
        case .fill(let length):
            guard let source = self.sockets[side], let pipe = self.pipes[side] else { return false }
            let moved = afproxy_splice(source, pipe[1], length)
            if moved > 0 {
                self.pumps[side]?.filled(.moved(moved))
                self.took(moved, from: side)
            } else if moved == 0 {
                self.pumps[side]?.filled(.endOfInput)
            } else {
                let code = errno
                if code == EAGAIN {
                    self.pumps[side]?.filled(.wouldBlock)
                } else if code == EINVAL || code == ENOSYS || code == EOPNOTSUPP {
                    // Splice does not work on this socket: its input goes back to NIO.
                    self.pumps[side]?.nioTookInput()
                } else {
                    self.fail(side, errno: code)
                }
            }
            return true
        case .drain(let length):
            guard let sink = self.sockets[side.other], let pipe = self.pipes[side] else { return false }
            let moved = afproxy_splice(pipe[0], sink, length)
            if moved > 0 {
                self.pumps[side]?.drained(.moved(moved))
            } else {
                let code = errno
                if moved < 0 && code != EAGAIN {
                    self.fail(side.other, errno: code)
                } else {
                    self.pumps[side]?.drained(.wouldBlock)
                }
            }
            return true
        }
    }

    /// Bytes entered the pipe from `side`: counted (as the NIO path counts what it read) and
    /// taken from the throttle's buckets.
    private func took(_ count: Int, from side: TunnelLifecycle.Side) {
        self.counters.add(count, from: side)
        if side == .upstream && !self.sawFirstByte {
            self.sawFirstByte = true
            self.owner?.upstreamSentFirstByte()
        }
        let throttled = self.throttle?.isActive == true
        if throttled { self.throttle?.take(Self.direction(side), count) }
        self.owner?.spliceFilled(count, throttled: throttled)
    }

    /// What the throttle lets the next fill from `side` take; nil: no bound. A bucket in debt
    /// holds the direction until the wake it schedules.
    private func grant(_ side: TunnelLifecycle.Side) -> Int? {
        guard let throttle = self.throttle, throttle.isActive, !self.throttled.contains(side) else { return nil }
        switch throttle.acquire(Self.direction(side), need: 0) {
        case .go(let available):
            return available
        case .wait(let wait):
            self.throttled.insert(side)
            let box = self.box
            let nanoseconds = wait.components.seconds * 1_000_000_000 + wait.components.attoseconds / 1_000_000_000
            self.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
                guard let relay = box.value else { return }
                relay.throttled.remove(side)
                relay.run()
            }
            return 0
        }
    }

    /// The socket of `side` failed, as a NIO read or write on it would have.
    private func fail(_ side: TunnelLifecycle.Side, errno code: Int32) {
        let owner = self.owner
        self.stop()
        owner?.failed(side, IOError(errnoCode: code, reason: "splice"))
    }

    /// Asks the watcher for what each socket's directions wait for, where not asked already.
    private func arm() {
        for side in TunnelLifecycle.Side.allCases {
            guard let fd = self.sockets[side] else { continue }
            var want: UInt32 = 0
            if self.pumps[side]?.wantsReadable == true { want |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
            if self.pumps[side.other]?.wantsWritable == true { want |= EPOLLOUT.rawValue }
            guard want != 0, want != self.armed[side] else { continue }
            if self.watcher.arm(fd, tunnel: self.tunnel, side: Self.bit(side), events: want, add: false) {
                self.armed[side] = want
            }
        }
    }

    private static func bit(_ side: TunnelLifecycle.Side) -> UInt64 { side == .client ? 0 : 1 }

    private static func direction(_ side: TunnelLifecycle.Side) -> ThrottleDirection {
        side == .upstream ? .down : .up
    }
}

import AFProxyModel
import Dispatch
import NIOCore
import NIOPosix
import Testing

@testable import AFProxyTunnel

#if canImport(Glibc)
import Glibc
#endif

/// The kernel relay over real loopback TCP connections, as the daemon runs it (its own event
/// loop, the shared watcher thread, splice(2) through its pipes), without a tunnel around it: the
/// test holds the application ends and a recorder stands for `TunnelRelay`.
@Suite struct SpliceRelayTests {
    init() {
        // A splice into a reset socket raises SIGPIPE, which the daemon ignores (Daemon.swift).
        signal(SIGPIPE, SIG_IGN)
    }

    @Test func bytesCrossBothWaysWholeAndInOrderAndEachEndIsHandedBack() async throws {
        let tunnel = try await SplicedPair.start()
        let up = Pattern.bytes(4 << 20, seed: 1)
        let down = Pattern.bytes(3 << 20, seed: 2)
        async let wroteUp: Void = offPool { tunnel.client.writeAll(up, thenShutDown: true) }
        async let wroteDown: Void = offPool { tunnel.upstream.writeAll(down, thenShutDown: true) }
        async let gotUp = offPool { tunnel.upstream.read(up.count) }
        async let gotDown = offPool { tunnel.client.read(down.count) }
        _ = await (wroteUp, wroteDown)
        #expect(await gotUp == up)
        #expect(await gotDown == down)
        // Each input's end is handed to NIO once its pipe is empty; nothing failed.
        try await tunnel.owner.waitUntil { $0.handedBack == [.client, .upstream] }
        let record = tunnel.owner.record
        #expect(record.failures.isEmpty)
        #expect(record.firstBytes == 1)
        #expect(tunnel.counters.uploaded.load(ordering: .relaxed) == Int64(up.count))
        #expect(tunnel.counters.downloaded.load(ordering: .relaxed) == Int64(down.count))
        try await tunnel.stop()
    }

    @Test func aPausedTunnelMovesNothingUntilKicked() async throws {
        let tunnel = try await SplicedPair.start(paused: true)
        let up = Pattern.bytes(256 << 10, seed: 3)
        async let wrote: Void = offPool { tunnel.client.writeAll(up, thenShutDown: false) }
        // Loop turns for the watcher's readiness to come and be acted on: a pause must hold them.
        for _ in 0..<20 { try await tunnel.loop.submit {}.get() }
        #expect(tunnel.counters.uploaded.load(ordering: .relaxed) == 0)
        tunnel.counters.setPaused(false)
        try await tunnel.onLoop { $0.kick() }
        #expect(await offPool { tunnel.upstream.read(up.count) } == up)
        await wrote
        #expect(tunnel.counters.uploaded.load(ordering: .relaxed) == Int64(up.count))
        try await tunnel.stop()
    }

    @Test func handingBackMidStreamDeliversWhatThePipesHeldAndStopsFilling() async throws {
        // The bulk is over (`TunnelSpliceGate`): no more fills, each direction handed back once
        // its pipe is empty; what the sockets get after that is NIO's, not the pipes'.
        let tunnel = try await SplicedPair.start()
        let up = Pattern.bytes(2 << 20, seed: 5)
        let down = Pattern.bytes(1 << 20, seed: 6)
        async let wroteUp: Void = offPool { tunnel.client.writeAll(up, thenShutDown: false) }
        async let wroteDown: Void = offPool { tunnel.upstream.writeAll(down, thenShutDown: false) }
        #expect(await offPool { tunnel.upstream.read(up.count) } == up)
        #expect(await offPool { tunnel.client.read(down.count) } == down)
        _ = await (wroteUp, wroteDown)
        try await tunnel.onLoop { $0.handBackAll() }
        try await tunnel.owner.waitUntil { $0.handedBack == [.client, .upstream] }
        tunnel.client.writeAll(Pattern.bytes(64 << 10, seed: 7), thenShutDown: false)
        for _ in 0..<20 { try await tunnel.loop.submit {}.get() }
        #expect(tunnel.counters.uploaded.load(ordering: .relaxed) == Int64(up.count))
        #expect(tunnel.counters.downloaded.load(ordering: .relaxed) == Int64(down.count))
        #expect(tunnel.owner.record.failures.isEmpty)
        try await tunnel.stop()
    }

    @Test func aResetSocketFailsItsSideAndStopsTheRelay() async throws {
        let tunnel = try await SplicedPair.start()
        tunnel.upstream.reset()
        tunnel.client.writeAll(Pattern.bytes(64 << 10, seed: 4), thenShutDown: false)
        try await tunnel.owner.waitUntil { !$0.failures.isEmpty }
        #expect(tunnel.owner.record.failures == [.upstream])
        // The relay stopped itself: a kick after it finds nothing to do.
        try await tunnel.onLoop { $0.kick() }
        try await tunnel.stop()
    }
}

/// A relay between two loopback connections: `client` and `upstream` are the far ends a test
/// writes and reads, as the client and the origin would.
private struct SplicedPair: Sendable {
    let client: LoopbackConnection
    let upstream: LoopbackConnection
    let owner: RecordingOwner
    let counters: TunnelCounters
    let loop: any EventLoop
    let relay: NIOLoopBound<SpliceRelay>

    static func start(paused: Bool = false) async throws -> SplicedPair {
        let client = try LoopbackConnection()
        let upstream = try LoopbackConnection()
        let owner = RecordingOwner()
        let counters = TunnelCounters()
        counters.setPaused(paused)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let started = try await loop.submit { () -> NIOLoopBound<SpliceRelay>? in
            guard
                let relay = SpliceRelay(
                    client: client.relayEnd, upstream: upstream.relayEnd, owner: owner, counters: counters,
                    throttle: nil, eventLoop: loop), relay.start()
            else { return nil }
            return NIOLoopBound(relay, eventLoop: loop)
        }.get()
        let relay = try #require(started, "the kernel relay could not be had here (watcher, pipe or epoll)")
        return SplicedPair(
            client: client, upstream: upstream, owner: owner, counters: counters, loop: loop, relay: relay)
    }

    func onLoop(_ body: @escaping @Sendable (SpliceRelay) -> Void) async throws {
        let relay = self.relay
        try await self.loop.submit { body(relay.value) }.get()
    }

    /// Out of the watcher before the sockets close, as the daemon stops it.
    func stop() async throws {
        try await self.onLoop { $0.stop() }
        self.client.close()
        self.upstream.close()
    }
}

/// What the relay told its owner, kept for the test to read from its own thread.
private final class RecordingOwner: SpliceRelayOwner, Sendable {
    struct Record: Sendable {
        var handedBack: Set<TunnelLifecycle.Side> = []
        var failures: [TunnelLifecycle.Side] = []
        var firstBytes = 0
    }

    private let state = Locked(Record())

    var record: Record { self.state.withLock { $0 } }

    func spliceHandedBack(_ side: TunnelLifecycle.Side) { self.state.withLock { _ = $0.handedBack.insert(side) } }
    func upstreamSentFirstByte() { self.state.withLock { $0.firstBytes += 1 } }
    func spliceFilled(_ count: Int, throttled: Bool) {}
    func failed(_ side: TunnelLifecycle.Side, _ error: any Error) { self.state.withLock { $0.failures.append(side) } }

    /// Polls until `condition` holds of what was recorded; a minute without it fails the test
    /// (a bound on a hang, not a measure of speed).
    func waitUntil(_ condition: (Record) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition(self.record) {
            guard ContinuousClock.now < deadline else {
                Issue.record("still waiting; recorded: \(self.record)")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// One loopback TCP connection: `relayEnd` non-blocking for the relay, as NIO's sockets are; the
/// far end blocking, for the test's reads and writes.
private final class LoopbackConnection: Sendable {
    let relayEnd: Int32
    /// -1 once reset: its number may be another test's socket by then.
    private let farEnd: Locked<Int32>
    private var far: Int32 { self.farEnd.withLock { $0 } }

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let far = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listener, socketAddress, length) == 0 && listen(listener, 1) == 0
                    && getsockname(listener, socketAddress, &length) == 0 && connect(far, socketAddress, length) == 0
            }
        }
        try #require(connected, "loopback connection: errno \(errno)")
        let near = accept(listener, nil, nil)
        try #require(near >= 0, "accept: errno \(errno)")
        _ = fcntl(near, F_SETFL, fcntl(near, F_GETFL) | O_NONBLOCK)
        self.relayEnd = near
        self.farEnd = Locked(far)
    }

    func writeAll(_ bytes: [UInt8], thenShutDown: Bool) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(self.far, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { return }
            offset += written
        }
        if thenShutDown { shutdown(self.far, Int32(SHUT_WR)) }
    }

    /// Reads until `count` bytes came or the input ended.
    func read(_ count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while received.count < count {
            let got = chunk.withUnsafeMutableBytes {
                Glibc.read(self.far, $0.baseAddress, min($0.count, count - received.count))
            }
            guard got > 0 else { break }
            received += chunk[..<got]
        }
        return received
    }

    /// Closes the far end with a reset (SO_LINGER 0), as a crashed peer would.
    func reset() {
        self.farEnd.withLock { far in
            var option = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(far, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            Glibc.close(far)
            far = -1
        }
    }

    func close() {
        Glibc.close(self.relayEnd)
        self.farEnd.withLock { far in
            if far >= 0 { Glibc.close(far) }
            far = -1
        }
    }
}

private enum Pattern {
    /// Bytes that never repeat with a power of two, so that a lost, repeated or reordered piece shows.
    static func bytes(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251 &+ seed) }
    }
}

/// Runs `body` on a Dispatch thread (it blocks in read and write), off the test's concurrency pool.
private func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}

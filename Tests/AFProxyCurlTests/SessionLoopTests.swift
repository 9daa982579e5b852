import AFProxyModel
import AFProxyRules
import AFProxyTransport
import Testing

@testable import AFProxyCurl

#if canImport(Glibc)
import Glibc
#endif

/// The session thread end to end (`SessionLoop` driving curl's multi handle over the
/// `SocketWatcher`'s epoll set) against an origin on 127.0.0.1, without the manager: what a task
/// is told, byte for byte, when it only reads, pauses, resumes, cancels, and reuses a connection.
/// The integration suite drives the same through the daemon; these name the piece that broke.
@Suite(.serialized) struct SessionLoopTests {
    private func request(_ url: String) -> TransferRequest {
        TransferRequest(
            request: ProxyRequest(method: "GET", url: url, headers: [], body: .none, client: "127.0.0.1"))
    }

    /// A running session and an origin answering each request with `answer(n)`, both stopped after `body`.
    private func withOrigin(
        _ answer: @escaping @Sendable (Int) -> [UInt8], _ body: (UpstreamSession, LoopbackOrigin) throws -> Void
    ) rethrows {
        let origin = LoopbackOrigin(answer: answer)
        defer { origin.stop() }
        let session = UpstreamSession()
        session.run()
        defer { session.shutdown() }
        try body(session, origin)
    }

    @Test func aBodyArrivesWholeAndInOrder() throws {
        let size = 3 << 20
        let answer: @Sendable (Int) -> [UInt8] = { _ in LoopbackOrigin.answer(bodyOf: size) }
        try self.withOrigin(answer) { session, origin in
            let delegate = RecordingDelegate()
            session.makeTransfer(self.request(origin.url), delegate: delegate).start()

            let record = try delegate.waitForCompletion()
            #expect(record.result == .success)
            #expect(record.status == 200)
            #expect(record.bytes == size)
            #expect(record.checksum == RecordingDelegate.checksum(of: size))
        }
    }

    /// Two exchanges one after the other take one connection: curl's cache keeps it and the
    /// watcher keeps watching it between them.
    @Test func aSecondExchangeReusesTheConnection() throws {
        let answer: @Sendable (Int) -> [UInt8] = { _ in LoopbackOrigin.answer(bodyOf: 1000) }
        try self.withOrigin(answer) { session, origin in
            for _ in 0..<2 {
                let delegate = RecordingDelegate()
                session.makeTransfer(self.request(origin.url), delegate: delegate).start()
                let record = try delegate.waitForCompletion()
                #expect(record.result == .success)
                #expect(record.checksum == RecordingDelegate.checksum(of: 1000))
            }
            #expect(origin.accepted.withLock { $0 } == 1)
        }
    }

    /// An answer nobody asked for, arriving on a connection that went back to curl's cache, is
    /// never taken for the next exchange's answer (`SocketWatcher.idle`): the watcher shuts that
    /// connection down and the second exchange gets its own body, on a connection of its own.
    @Test func bytesOnAnIdleConnectionAreNotTheNextAnswer() throws {
        let answer: @Sendable (Int) -> [UInt8] = { number in LoopbackOrigin.answer(bodyOf: 100 * number) }
        try self.withOrigin(answer) { session, origin in
            let first = RecordingDelegate()
            session.makeTransfer(self.request(origin.url), delegate: first).start()
            #expect(try first.waitForCompletion().bytes == 100)
            origin.writeOnLastConnection(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray".utf8))
            let second = RecordingDelegate()
            session.makeTransfer(self.request(origin.url), delegate: second).start()
            let record = try second.waitForCompletion()
            #expect(record.result == .success)
            #expect(record.bytes == 200)
            #expect(record.checksum == RecordingDelegate.checksum(of: 200))
            #expect(origin.accepted.withLock { $0 } == 2)
        }
    }

    /// Suspended after its first bytes and resumed once the test sees them: nothing is lost or
    /// repeated across the pause.
    @Test func aSuspendedTransferResumesWithEveryByte() throws {
        let size = 8 << 20
        let answer: @Sendable (Int) -> [UInt8] = { _ in LoopbackOrigin.answer(bodyOf: size) }
        try self.withOrigin(answer) { session, origin in
            let delegate = RecordingDelegate(onFirstBytes: { $0.suspend() })
            let transfer = session.makeTransfer(self.request(origin.url), delegate: delegate)
            transfer.start()
            try delegate.waitFor("the first body bytes") { $0.firstBytesHandled }
            transfer.resume()

            let record = try delegate.waitForCompletion()
            #expect(record.result == .success)
            #expect(record.bytes == size)
            #expect(record.checksum == RecordingDelegate.checksum(of: size))
        }
    }

    /// Suspended at an interim head, with the next interim head, the final head and the body
    /// read in the same piece: the suspend takes hold at the first body byte (`desiredPause`
    /// waits for the final head), both heads still arrive, and the body is whole after the
    /// resume. Not the reproducer of curl's out-of-memory failure that made the pause wait
    /// (that needed a suspend landing between two reads of a head, which this cannot place).
    @Test func aSuspendAtAnInterimHeadHoldsTheAnswerWhole() throws {
        let size = 256 << 10
        let hints = Array("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n".utf8)
        let answer: @Sendable (Int) -> [UInt8] = { _ in hints + hints + LoopbackOrigin.answer(bodyOf: size) }
        try self.withOrigin(answer) { session, origin in
            let delegate = RecordingDelegate(onFirstInterim: { $0.suspend() })
            let transfer = session.makeTransfer(self.request(origin.url), delegate: delegate)
            transfer.start()
            try delegate.waitFor("the first interim head") { $0.firstInterimHandled }
            transfer.resume()

            let record = try delegate.waitForCompletion()
            #expect(record.result == .success)
            #expect(record.interims == 2)
            #expect(record.status == 200)
            #expect(record.bytes == size)
            #expect(record.checksum == RecordingDelegate.checksum(of: size))
        }
    }

    /// A transfer whose origin went silent mid-body ends when cancelled, with the reason given.
    @Test func aCancelEndsTheTransferWithItsReason() throws {
        let answer: @Sendable (Int) -> [UInt8] = { _ in Array(LoopbackOrigin.answer(bodyOf: 1 << 20).prefix(64 << 10)) }
        try self.withOrigin(answer) { session, origin in
            let delegate = RecordingDelegate()
            let transfer = session.makeTransfer(self.request(origin.url), delegate: delegate)
            transfer.start()
            try delegate.waitFor("the first body bytes") { $0.bytes > 0 }
            transfer.cancel(reason: .canceled("asked by the test"))

            let record = try delegate.waitForCompletion()
            guard case .failure(let failure) = record.result else {
                Issue.record("the transfer did not fail: \(String(describing: record.result))")
                return
            }
            #expect(failure.code == "canceled")
            #expect(failure.message == "asked by the test")
            #expect(record.bytes < 1 << 20)
        }
    }
}

/// What a transfer told its delegate, recorded on the session thread and read by the test.
private final class RecordingDelegate: HTTPTransferDelegate {
    struct Record: Sendable {
        var status: Int?
        var bytes = 0
        var checksum: UInt64 = 0
        var result: UpstreamResult?
        /// `onFirstBytes` ran: what it asked of the transfer was queued before anything the test
        /// does next.
        var firstBytesHandled = false
        var interims = 0
        /// `onFirstInterim` ran, as `firstBytesHandled` for `onFirstBytes`.
        var firstInterimHandled = false
    }

    private let record = Locked(Record())
    private let onFirstBytes: (@Sendable (any HTTPTransfer) -> Void)?
    private let onFirstInterim: (@Sendable (any HTTPTransfer) -> Void)?

    init(
        onFirstBytes: (@Sendable (any HTTPTransfer) -> Void)? = nil,
        onFirstInterim: (@Sendable (any HTTPTransfer) -> Void)? = nil
    ) {
        self.onFirstBytes = onFirstBytes
        self.onFirstInterim = onFirstInterim
    }

    /// The checksum of the first `count` bytes of `LoopbackOrigin`'s pattern, as `record` sums
    /// them: it depends on their order.
    static func checksum(of count: Int) -> UInt64 {
        (0..<count).reduce(0) { sum, index in sum &* 31 &+ UInt64(LoopbackOrigin.byte(at: index)) }
    }

    /// Polls until `condition` holds; the bound is only there so that a hang fails the test
    /// rather than the run, far beyond what any of these takes.
    func waitFor(_ what: String, _ condition: (Record) -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !self.record.withLock({ condition($0) }) {
            guard ContinuousClock.now < deadline else {
                Issue.record("never saw \(what): \(self.record.withLock { $0 })")
                throw WaitFailed()
            }
            usleep(2000)
        }
    }

    func waitForCompletion() throws -> Record {
        try self.waitFor("the completion") { $0.result != nil }
        return self.record.withLock { $0 }
    }

    func transfer(_ transfer: any HTTPTransfer, didReceiveInterim head: ProxyResponseHead) {
        let first = self.record.withLock { record in
            record.interims += 1
            return record.interims == 1
        }
        if first {
            self.onFirstInterim?(transfer)
            self.record.withLock { $0.firstInterimHandled = true }
        }
    }

    func transfer(_ transfer: any HTTPTransfer, didReceive head: ProxyResponseHead, metrics: TaskMetrics) {
        self.record.withLock { $0.status = head.status }
    }

    func transfer(_ transfer: any HTTPTransfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyReceipt {
        let first = self.record.withLock { record in
            let first = record.bytes == 0
            record.bytes += bytes.count
            for byte in bytes { record.checksum = record.checksum &* 31 &+ UInt64(byte) }
            return first
        }
        if first {
            self.onFirstBytes?(transfer)
            self.record.withLock { $0.firstBytesHandled = true }
        }
        return .taken
    }

    func transferDidReceiveWholeBody(_ transfer: any HTTPTransfer) {}

    func transfer(
        _ transfer: any HTTPTransfer, fillRequestBody buffer: UnsafeMutableRawBufferPointer
    ) -> RequestBodyRead {
        .end
    }

    func transferRewindRequestBody(_ transfer: any HTTPTransfer) -> Bool { true }

    func transferDidFlush(_ transfer: any HTTPTransfer) {}

    func transfer(_ transfer: any HTTPTransfer, didCompleteWith result: UpstreamResult, metrics: TaskMetrics) {
        self.record.withLock { $0.result = result }
    }
}

private struct WaitFailed: Error {}

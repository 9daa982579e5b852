import AFProxyModel
import AFProxyRules
import AFProxyTransport
import Testing

@testable import AFProxyCurl

/// The session's side of the seam: `makeTransfer` only wraps what the task asked for in a handle
/// bound to the session. Starting is the task's to decide (a held task never starts), so nothing
/// may be queued, no easy handle made and no delegate called before `start()`.
@Suite struct UpstreamSessionMakeTransferTests {
    @Test func theHandleCarriesTheRequestAndStartsNothing() throws {
        let session = UpstreamSession()
        defer { session.shutdown() }
        let delegate = CountingDelegate()
        let throttler = Throttler()
        let asked = TransferRequest(
            request: ProxyRequest(
                method: "GET", url: "http://origin.test/file.bin", headers: [HTTPHeaderField("Accept", "*/*")],
                body: .none, client: "127.0.0.1"),
            options: .download(caFile: "/etc/afproxy/ca.pem", pins: "sha256//AAAA"),
            destinations: DestinationPolicy(denyPrivate: true),
            throttle: ThrottleTicket(throttler: throttler, task: 7, host: "origin.test"))

        let handle = session.makeTransfer(asked, delegate: delegate)

        #expect(handle.request.request.url == "http://origin.test/file.bin")
        #expect(handle.request.request.headers == asked.request.headers)
        #expect(handle.request.options == asked.options)
        #expect(handle.request.destinations == asked.destinations)
        #expect(handle.request.throttle?.task == 7)
        #expect(handle.request.throttle?.throttler === throttler)
        let transfer = try #require(handle as? UpstreamTransfer)
        #expect(transfer.session === session)
        #expect(transfer.phase == .waiting)
        #expect(transfer.handle == nil)
        #expect(transfer.url == "http://origin.test/file.bin")
        #expect(delegate.calls.withLock { $0 } == 0)
    }
}

/// A delegate that only counts: nothing should reach it here.
final class CountingDelegate: HTTPTransferDelegate {
    let calls = Locked(0)

    func transfer(_ transfer: any HTTPTransfer, didReceiveInterim head: ProxyResponseHead) { self.count() }
    func transfer(_ transfer: any HTTPTransfer, didReceive head: ProxyResponseHead, metrics: TaskMetrics) {
        self.count()
    }
    func transfer(_ transfer: any HTTPTransfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyReceipt {
        self.count()
        return .taken
    }
    func transferDidReceiveWholeBody(_ transfer: any HTTPTransfer) { self.count() }
    func transfer(
        _ transfer: any HTTPTransfer, fillRequestBody buffer: UnsafeMutableRawBufferPointer
    ) -> RequestBodyRead {
        self.count()
        return .end
    }
    func transferRewindRequestBody(_ transfer: any HTTPTransfer) -> Bool {
        self.count()
        return false
    }
    func transferDidFlush(_ transfer: any HTTPTransfer) { self.count() }
    func transfer(_ transfer: any HTTPTransfer, didCompleteWith result: UpstreamResult, metrics: TaskMetrics) {
        self.count()
    }

    private func count() { self.calls.withLock { $0 += 1 } }
}

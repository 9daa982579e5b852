import AFProxyModel
import AFProxyRules
import AFProxyTestSupport
import AFProxyTransport
import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyManager

/// What the tasks ask of their transport, and what they make of its reports, with the in-memory
/// transport in place of curl and the tunnel relay: no thread, no socket, every report made by
/// the test as the session thread (or the relay) would.
@Suite struct SessionManagerTransportTests {
    private final class RecordingClient: TaskClient, @unchecked Sendable {
        private let received = Locked<[ResponseDelivery]>([])
        var deliveries: [ResponseDelivery] { self.received.withLock { $0 } }
        var bodyBytes: Int { self.deliveries.reduce(0) { $0 + ($1.body?.readableBytes ?? 0) } }

        func task(_ task: HTTPTask, deliver delivery: ResponseDelivery) {
            self.received.withLock { $0.append(delivery) }
        }
        func taskWantsRequestBody(_ task: HTTPTask) {}
        func taskAwaitsRequestBody(_ task: HTTPTask) {}
        func task(_ task: HTTPTask, didChangeSuspension suspended: Bool) {}
    }

    private final class EventLog: @unchecked Sendable {
        private let events = Locked<[TaskEvent.Kind]>([])
        var kinds: [TaskEvent.Kind] { self.events.withLock { $0 } }
        func append(_ kind: TaskEvent.Kind) { self.events.withLock { $0.append(kind) } }
    }

    private let transport = InMemoryTransport()
    private let client = RecordingClient()
    private let log = EventLog()
    private let manager: SessionManager

    init() {
        self.manager = SessionManager(transport: self.transport, historyCapacity: 4, transparentResumeLimit: 1)
        _ = self.manager.events.subscribe { [log] event in log.append(event.event) }
    }

    private func start(_ url: String = "http://origin.test/file") -> HTTPTask {
        let request = ProxyRequest(method: "GET", url: url, headers: [], body: .none, client: "c")
        return self.manager.startTask(request, client: self.client)
    }

    private func head(_ status: Int, _ headers: HTTPHeaderList) -> ProxyResponseHead {
        ProxyResponseHead(status: status, reason: "", version: "HTTP/1.1", headers: headers)
    }

    @Test func theVerbsOfAnHTTPTaskBecomeTheTransportsCommandsForItsTransfer() throws {
        let task = self.start()
        #expect(self.transport.commands(for: task.transfer) == [.start])
        _ = try self.manager.suspend(id: task.id)
        _ = try self.manager.resume(id: task.id)
        _ = try self.manager.cancel(id: task.id)
        #expect(self.transport.commands(for: task.transfer) == [.start, .suspend, .resume, .cancel(.canceled())])
        // Only the transport's report of the end completes the task.
        #expect(self.manager.liveCount == 1)
        self.transport.complete(task.transfer, with: .failure(.canceled()))
        #expect(self.manager.liveCount == 0)
    }

    @Test func aTaskLeavesTheRegistryForTheHistoryWhenTheTransportReportsItsEnd() throws {
        let task = self.start()
        self.transport.receiveHead(self.head(200, [HTTPHeaderField("Content-Length", "5")]), on: task.transfer)
        #expect(self.transport.receiveBody(Array("hello".utf8), on: task.transfer) == .taken)
        self.transport.flush(task.transfer)
        #expect(self.manager.liveCount == 1)
        #expect(self.manager.task(id: task.id)?.state == .running)
        self.transport.complete(task.transfer, with: .success)
        #expect(self.manager.liveCount == 0)
        let record = try #require(self.manager.task(id: task.id))
        #expect((record.state, record.status, record.download.completed) == (.completed, 200, 5))
        #expect(self.client.bodyBytes == 5)
        #expect(self.client.deliveries.last?.end == .complete)
        #expect(self.log.kinds == [.created, .completed])
        #expect(self.manager.stats().served == 1)
    }

    @Test func aHeldTaskStartsNothingUntilItIsReleased() throws {
        _ = self.manager.rules.holds.add(HoldConditions(all: true), once: false)
        let task = self.start()
        #expect(task.state == .suspended)
        #expect(self.transport.commands.isEmpty)
        #expect(self.log.kinds == [.created, .held])
        _ = try self.manager.resume(id: task.id)
        #expect(self.transport.commands(for: task.transfer) == [.start])
        #expect(self.log.kinds == [.created, .held, .resumed])
    }

    @Test func aFastOriginsBodyGoesToTheClientInDeliveriesOfAtMostTheGatherLimitInOrder() throws {
        let callbacks = 40
        let piece = 16 << 10
        let task = self.start()
        let length = callbacks * piece
        self.transport.receiveHead(self.head(200, [HTTPHeaderField("Content-Length", "\(length)")]), on: task.transfer)
        for index in 0..<callbacks {
            let receipt = self.transport.receiveBody([UInt8](repeating: UInt8(index), count: piece), on: task.transfer)
            #expect(receipt != .refused)
        }
        // No flush came yet: what went out went because the gathered bytes reached the limit.
        let early = self.client.deliveries.count
        #expect(early == length / HTTPTask.gatherLimit)
        self.transport.flush(task.transfer)
        let bodies = self.client.deliveries.compactMap(\.body)
        #expect(bodies.allSatisfy { $0.readableBytes <= HTTPTask.gatherLimit })
        #expect(self.client.deliveries.first?.head?.status == 200)
        var all: [UInt8] = []
        for body in bodies { all += body.readableBytesView }
        #expect(all.count == length)
        #expect(all == (0..<callbacks).flatMap { [UInt8](repeating: UInt8($0), count: piece) })
    }

    @Test func aSuspendedTaskRefusesBodyBytesAndTheTransportOffersThemAgainOnResume() throws {
        let task = self.start()
        self.transport.receiveHead(self.head(200, [HTTPHeaderField("Content-Length", "4")]), on: task.transfer)
        _ = try self.manager.suspend(id: task.id)
        #expect(self.transport.receiveBody([1, 2, 3, 4], on: task.transfer) == .refused)
        #expect(task.bytesDown == 0)
        _ = try self.manager.resume(id: task.id)
        #expect(self.transport.receiveBody([1, 2, 3, 4], on: task.transfer) == .taken)
        #expect(task.bytesDown == 4)
    }

    /// A GET the origin broke off is asked again for the rest, on a new transfer of the same
    /// task, with `Range` and `If-Range`; the client sees one response.
    @Test func aBrokenResponseIsContinuedOnANewTransferWithARangeRequest() throws {
        let task = self.start()
        let first = task.transfer
        let headers: HTTPHeaderList = [
            HTTPHeaderField("Content-Length", "10"), HTTPHeaderField("Accept-Ranges", "bytes"),
            HTTPHeaderField("ETag", "\"v1\""),
        ]
        self.transport.receiveHead(self.head(200, headers), on: first)
        _ = self.transport.receiveBody(Array("01234".utf8), on: first)
        self.transport.complete(first, with: .failure(.upstreamBroken("upstream broke off")))
        #expect(self.manager.liveCount == 1)
        let second = try #require(self.transport.started.last)
        #expect(second !== first)
        #expect(second.request.request.headers.first("range") == "bytes=5-")
        #expect(second.request.request.headers.first("if-range") == "\"v1\"")
        let rest: HTTPHeaderList = [
            HTTPHeaderField("Content-Length", "5"), HTTPHeaderField("Content-Range", "bytes 5-9/10"),
            HTTPHeaderField("ETag", "\"v1\""),
        ]
        self.transport.receiveHead(self.head(206, rest), on: second)
        _ = self.transport.receiveBody(Array("56789".utf8), on: second)
        self.transport.complete(second, with: .success)
        let record = try #require(self.manager.task(id: task.id))
        #expect((record.state, record.error, record.download.completed) == (.completed, nil, 10))
        #expect(record.resumes.map(\.offset) == [5])
        #expect(self.client.bodyBytes == 10)
        #expect(self.log.kinds == [.created, .resumedAtOffset, .completed])
    }

    @Test func aHeldTunnelIsOpenedButStartsOnlyWhenReleasedOnItsLoop() throws {
        let loop = EmbeddedEventLoop()
        _ = self.manager.rules.holds.add(HoldConditions(all: true), once: false)
        let task = self.manager.startStream(StreamRequest(host: "origin.test", port: 443, client: "c"), on: loop)
        let tunnel = try #require(self.transport.tunnels.first)
        #expect((tunnel.host, tunnel.port) == ("origin.test", 443))
        #expect(tunnel.commands.isEmpty)
        _ = try self.manager.resume(id: task.id)
        #expect(tunnel.commands.isEmpty)  // not yet: the start hops to the tunnel's loop
        loop.run()
        #expect(tunnel.commands == [.start])
        _ = try self.manager.suspend(id: task.id)
        _ = try self.manager.cancel(id: task.id)
        #expect(tunnel.commands == [.start, .pause, .cancel(.canceled())])
        tunnel.complete(TunnelEnd(.canceled()))
        #expect(self.manager.liveCount == 0)
        #expect(self.manager.task(id: task.id)?.errorCode == "canceled")
    }

    @Test func anInterceptedConnectTakesItsClientSideFromTheTransportAndOpensNoTunnel() throws {
        let loop = EmbeddedEventLoop()
        var request = StreamRequest(host: "origin.test", port: 443, client: "c")
        request.intercepted = true
        let task = self.manager.startStream(request, on: loop)
        loop.run()
        #expect(self.transport.tunnels.isEmpty)
        let connection = try #require(self.transport.interceptedConnections.first)
        #expect(connection.commands == [.start])
        #expect(task.record().status == 200)
        _ = try self.manager.cancel(id: task.id)
        #expect(connection.commands == [.start, .cancel(.canceled())])
        connection.complete(TunnelEnd(.canceled()))
        #expect(self.manager.liveCount == 0)
    }

    @Test func aPinProbeGoesToTheTransportWithTheCAFileInForce() throws {
        self.transport.answerProbes(with: .success("sha256//pin"))
        self.manager.rules.apply(ConfiguredRules(security: SecurityPolicy(caFile: "/etc/ca.pem")))
        #expect(try self.manager.downloads.probePin(host: "origin.test", port: 8443).get() == "sha256//pin")
        #expect(self.transport.probes == ["origin.test:8443 /etc/ca.pem"])
    }
}

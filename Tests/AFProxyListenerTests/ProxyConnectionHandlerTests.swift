import AFProxyManager
import AFProxyModel
import AFProxyServerKit
import AFProxyTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AFProxyListener

/// The client connection's handler on an embedded channel, in the pipeline the listener builds.
/// Its tasks are real, on a session that never runs: a test hands each task's response to the
/// handler itself, as the task would.
@Suite struct ProxyConnectionHandlerTests {
    /// Counts the `read()` calls that pass the handlers and reach the channel.
    private final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var reads = 0

        func read(context: ChannelHandlerContext) {
            self.reads += 1
            context.read()
        }
    }

    private let channel = EmbeddedChannel()
    private let counter = ReadCounter()
    private let handler: ProxyConnectionHandler
    private let manager = SessionManager(transport: InMemoryTransport(), historyCapacity: 10)

    init() throws {
        let sync = self.channel.pipeline.syncOperations
        try sync.addHandler(self.counter)
        self.handler = try ProxyListener.addHTTPHandlers(
            to: sync, manager: self.manager, validator: RequestValidator(via: "test-proxy", maxHeaderBytes: 16 << 10),
            clientAddress: "127.0.0.1:1")
        try self.channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    }

    private func send(_ text: String) throws {
        try self.channel.writeInbound(ByteBuffer(string: text))
    }

    /// Everything written to the client so far, as text.
    private func written() throws -> String {
        var text = ""
        while let buffer = try self.channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    private var currentTask: HTTPTask? {
        guard case .forwarding(let exchange) = self.handler.state.phase else { return nil }
        return exchange.task
    }

    /// What the task hands over when its origin answered `body` in full.
    private func answer(_ task: HTTPTask, _ body: String) {
        let head = ProxyResponseHead(
            status: 200, reason: "OK", version: "1.1",
            headers: [HTTPHeaderField("Content-Length", String(body.utf8.count))])
        var delivery = ResponseDelivery()
        delivery.head = head
        delivery.body = ByteBuffer(string: body)
        delivery.end = .complete
        self.handler.deliver(delivery, of: task)
    }

    @Test func pipelinedRequestsAreAnsweredInOrderWithReadsHeldWhileOneWaits() throws {
        try self.send(
            "GET http://origin.test/first HTTP/1.1\r\nHost: origin.test\r\n\r\n"
                + "GET http://origin.test/second HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let first = try #require(self.currentTask)
        #expect(first.request.url == "http://origin.test/first")
        let readsBefore = self.counter.reads
        self.channel.read()
        #expect(self.counter.reads == readsBefore)  // held: a request waits

        self.answer(first, "one")
        let second = try #require(self.currentTask)
        #expect(second.request.url == "http://origin.test/second")
        #expect(self.counter.reads == readsBefore + 1)  // released once it no longer waits
        self.answer(second, "two")

        let text = try self.written()
        let one = try #require(text.firstRange(of: "\r\n\r\none"))
        let two = try #require(text.firstRange(of: "\r\n\r\ntwo"))
        #expect(one.upperBound <= two.lowerBound)
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count == 3)
        #expect(text.contains("Via: 1.1 test-proxy\r\n"))
        #expect(self.channel.isActive)
    }

    private func request(_ path: String) -> String {
        "GET http://origin.test/\(path) HTTP/1.1\r\nHost: origin.test\r\n\r\n"
    }

    /// An idle keep-alive connection holds no parser; the next request makes a fresh one and
    /// is parsed and answered as the first was.
    @Test func anIdleConnectionLetsItsParserGoAndTheNextRequestMakesANewOne() throws {
        try self.send(self.request("first"))
        #expect(self.handler.decoder.holdsParser)
        self.answer(try #require(self.currentTask), "one")
        #expect(!self.handler.decoder.holdsParser)

        try self.send(self.request("second"))
        let second = try #require(self.currentTask)
        #expect(second.request.url == "http://origin.test/second")
        self.answer(second, "two")
        #expect(!self.handler.decoder.holdsParser)
        let text = try self.written()
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count == 3)
        #expect(text.hasSuffix("\r\n\r\ntwo"), "\(text)")
        #expect(self.channel.isActive)
    }

    /// After the parser went, a request that arrives a byte at a time is parsed as a whole.
    @Test func aRequestSentByteByByteAfterIdleIsParsed() throws {
        try self.send(self.request("first"))
        self.answer(try #require(self.currentTask), "one")
        #expect(!self.handler.decoder.holdsParser)
        for byte in "POST http://origin.test/up HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 2\r\n\r\nhi".utf8 {
            try self.channel.writeInbound(ByteBuffer(bytes: [byte]))
        }
        let task = try #require(self.currentTask)
        #expect(task.request.url == "http://origin.test/up")
        #expect(task.request.method == "POST")
        self.answer(task, "ok")
        #expect(try self.written().hasSuffix("\r\n\r\nok"))
        #expect(self.channel.isActive)
    }

    /// A pipelined request that has begun to arrive when the response before it ends keeps the
    /// parser, which holds its first half.
    @Test func aPartlyPipelinedRequestKeepsTheParser() throws {
        try self.send(self.request("first") + "GET http://origin.test/second HTTP/1.1\r\nHo")
        self.answer(try #require(self.currentTask), "one")
        #expect(self.handler.decoder.holdsParser)
        #expect(self.currentTask == nil)
        try self.send("st: origin.test\r\n\r\n")
        let second = try #require(self.currentTask)
        #expect(second.request.url == "http://origin.test/second")
        self.answer(second, "two")
        #expect(!self.handler.decoder.holdsParser)
        #expect(try self.written().hasSuffix("\r\n\r\ntwo"))
    }

    /// Two requests in one read: the second waits for the first's answer, and the parser goes
    /// only once both are answered.
    @Test func aWholePipelinedRequestIsAnsweredBeforeTheParserGoes() throws {
        try self.send(self.request("first") + self.request("second"))
        self.answer(try #require(self.currentTask), "one")
        let second = try #require(self.currentTask)
        #expect(second.request.url == "http://origin.test/second")
        self.answer(second, "two")
        #expect(!self.handler.decoder.holdsParser)
        let text = try self.written()
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count == 3)
    }

    /// The client half-closes (here: its end of input reaches the decoder) while its connection
    /// is idle and holds no parser: nothing is answered and nothing fails.
    @Test func aHalfCloseWhileIdleWithoutAParserIsQuiet() throws {
        try self.send(self.request("first"))
        self.answer(try #require(self.currentTask), "one")
        _ = try self.written()
        #expect(!self.handler.decoder.holdsParser)
        self.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try self.written().isEmpty)
        #expect(!self.handler.decoder.holdsParser)
        _ = try? self.channel.close().wait()
        #expect(!self.channel.isActive)
    }

    /// What the timeout handler says once the connection has been idle for a while.
    private func idleForAWhile() {
        self.channel.pipeline.fireUserInboundEventTriggered(ConnectionTimeoutHandler.IdleForAWhile())
        self.channel.embeddedEventLoop.run()  // the decoder leaves on the next loop turn
    }

    private var codecInPipeline: Bool {
        (try? self.channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<RequestDecoder>.self)) != nil
    }

    /// Idle for a while: the codec leaves the pipeline, and the next request, even one that comes
    /// a byte at a time, puts it back and is answered as before.
    @Test func aConnectionIdleForAWhileShedsItsCodecUntilTheNextBytes() throws {
        try self.send(self.request("first"))
        self.answer(try #require(self.currentTask), "one")
        self.idleForAWhile()
        #expect(!self.codecInPipeline)
        #expect(self.handler.codec.isShed)
        self.idleForAWhile()  // twice: nothing more happens
        for byte in self.request("second").utf8 {
            try self.channel.writeInbound(ByteBuffer(bytes: [byte]))
        }
        #expect(self.codecInPipeline)
        let second = try #require(self.currentTask)
        #expect(second.request.url == "http://origin.test/second")
        self.answer(second, "two")
        let text = try self.written()
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count == 3)
        #expect(text.hasSuffix("\r\n\r\ntwo"), "\(text)")
        #expect((try? self.channel.pipeline.syncOperations.handler(type: WakeHandler.self)) == nil)
        self.idleForAWhile()
        #expect(!self.codecInPipeline)
    }

    /// Not shed: a request under way, a parser that holds half a request, an upgrade's parser.
    @Test func onlyANothingHoldingConnectionShedsItsCodec() throws {
        try self.send(self.request("first"))
        self.idleForAWhile()  // the request is under way
        #expect(self.codecInPipeline)
        try self.send("GET http://origin.test/second HTTP/1.1\r\nHo")
        self.answer(try #require(self.currentTask), "one")
        self.idleForAWhile()  // half a request is held
        #expect(self.codecInPipeline)
        try self.send("st: origin.test\r\n\r\n")
        self.answer(try #require(self.currentTask), "two")
        self.idleForAWhile()
        #expect(!self.codecInPipeline)
        #expect(try self.written().hasSuffix("\r\n\r\ntwo"))
    }

    /// Bytes that arrive before the old decoder has left wait for it, then go to a new one.
    @Test func bytesArrivingWhileTheDecoderLeavesWaitForIt() throws {
        try self.send(self.request("first"))
        self.answer(try #require(self.currentTask), "one")
        self.channel.pipeline.fireUserInboundEventTriggered(ConnectionTimeoutHandler.IdleForAWhile())
        try self.send("GET http://origin.test/second HTTP/1.1\r\n")
        #expect(self.currentTask == nil)
        self.channel.embeddedEventLoop.run()
        try self.send("Host: origin.test\r\n\r\n")
        let second = try #require(self.currentTask)
        #expect(second.request.url == "http://origin.test/second")
    }

    /// A half-close and a malformed request while shed go where they went before.
    @Test func aShedConnectionStillAnswersAMalformedRequestAndTakesAHalfClose() throws {
        try self.send(self.request("first"))
        self.answer(try #require(self.currentTask), "one")
        _ = try self.written()
        self.idleForAWhile()
        self.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try self.written().isEmpty)
        try self.send("GARBAGE\r\n\r\n")
        #expect(try self.written().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
    }

    /// A request that asks for a protocol upgrade other than WebSocket, which NIO's parser takes
    /// as the end of HTTP on the connection: the proxy declines it, so the request behind it
    /// (here in the same packet, pipelined) is parsed and answered in turn, not left unread
    /// until 408. (A WebSocket handshake becomes a tunnel instead: test_websocket.py.)
    @Test func aRequestAfterOneAskingForAnUpgradeIsServed() throws {
        try self.send(
            "GET http://origin.test/h2 HTTP/1.1\r\nHost: origin.test\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                + "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n" + self.request("second"))
        let first = try #require(self.currentTask)
        #expect(first.request.url == "http://origin.test/h2")
        #expect(first.request.headers.first("upgrade") == nil)
        self.answer(first, "one")
        let second = try #require(self.currentTask)
        #expect(second.request.url == "http://origin.test/second")
        self.answer(second, "two")
        let text = try self.written()
        #expect(text.contains("one") && text.hasSuffix("two"), "\(text)")
        // And a third, sent after the answers.
        try self.send(self.request("third"))
        #expect(self.currentTask?.request.url == "http://origin.test/third")
    }

    /// llhttp's rule: `Upgrade` with the `upgrade` token in `Connection`, nothing less; with
    /// `Upgrade` alone the parser never stopped, and it is kept as it is.
    @Test func anUpgradeFieldWithoutTheConnectionTokenAsksForNoUpgrade() throws {
        #expect(UpgradeDeclineHandler.asksForUpgrade(["Upgrade": "h2c", "Connection": "keep-alive, Upgrade"]))
        #expect(!UpgradeDeclineHandler.asksForUpgrade(["Upgrade": "h2c"]))
        #expect(!UpgradeDeclineHandler.asksForUpgrade(["Connection": "upgrade"]))
        try self.send(
            "GET http://origin.test/a HTTP/1.1\r\nHost: origin.test\r\nUpgrade: h2c\r\n\r\n" + self.request("b"))
        self.answer(try #require(self.currentTask), "one")
        #expect(self.currentTask?.request.url == "http://origin.test/b")
    }

    @Test func aRequestWithConflictingFramingIsRefusedAndTheConnectionCloses() throws {
        try self.send(
            "POST http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 3\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n")
        let text = try self.written()
        #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(text)")
        #expect(text.contains("Connection: close\r\n"))
        #expect(self.currentTask == nil)
        self.channel.embeddedEventLoop.run()
        #expect(!self.channel.isActive)
    }

    @Test func aClientThatGoesAwayMidRequestEndsItsTask() throws {
        try self.send("POST http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 10\r\n\r\nabc")
        let task = try #require(self.currentTask)
        #expect(task.state == .running)
        // A half-close of the client: without allowRemoteHalfClosure NIO closes the channel.
        self.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        _ = try? self.channel.close().wait()
        #expect(task.state == .canceling)
        #expect(task.record().state == .canceling)
    }

    @Test func aResponseTheClientCannotTakeBecomesA502() throws {
        try self.send("GET http://origin.test/ HTTP/1.0\r\nHost: origin.test\r\n\r\n")
        let task = try #require(self.currentTask)
        var delivery = ResponseDelivery()
        delivery.head = ProxyResponseHead(
            status: 200, reason: "OK", version: "1.1",
            headers: [HTTPHeaderField("Transfer-Encoding", "gzip, chunked")])
        self.handler.deliver(delivery, of: task)
        let text = try self.written()
        #expect(text.hasPrefix("HTTP/1.0 502 Bad Gateway\r\n"), "\(text)")
        #expect(task.state == .canceling)
    }

    /// `ConnectHandler` takes the connection over at the CONNECT's end and answers as bytes,
    /// since the HTTP handlers are gone: a refused target gets its status, a body and a close.
    @Test func aRefusedConnectIsAnsweredByTheConnectHandlerAndCloses() throws {
        try self.send("CONNECT origin.test:25 HTTP/1.1\r\nHost: origin.test:25\r\n\r\nearly bytes")
        self.channel.embeddedEventLoop.run()
        let text = try self.written()
        #expect(text.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(text)")
        #expect(text.contains("Via: 1.1 test-proxy\r\n"))
        #expect(
            text.contains("\r\n\r\n403 Forbidden: CONNECT to port 25 is not allowed; allowed ports: 443"), "\(text)")
        // The body is framed by its length, and nothing of the early bytes is answered.
        let body = try #require(text.split(separator: "\r\n\r\n", maxSplits: 1).last)
        #expect(text.contains("Content-Length: \(body.utf8.count)\r\n"))
        #expect(!self.channel.isActive)
        #expect(self.manager.liveCount == 0)
    }
}

import AFProxyManager
import AFProxyModel
import AFProxyTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AFProxyControl

/// A control connection in memory: answers with their heads, and `/v1/events` as a channel handler
/// behind `ControlHandler` (its lines, its `missed` line, its last chunk). The session manager's
/// session thread never runs; events are published by hand.
@Suite struct ControlHandlerTests {
    private let manager = SessionManager(transport: InMemoryTransport(), historyCapacity: 4)

    private func channel(
        streams: ControlStreams? = nil, first: (any ChannelHandler)? = nil
    ) throws -> EmbeddedChannel {
        let router = ControlRouter.api(
            manager: self.manager, extraStats: { _ in }, metrics: nil, web: { nil }, streams: streams)
        let channel = EmbeddedChannel()
        if let first { try channel.pipeline.syncOperations.addHandler(first) }
        try channel.pipeline.syncOperations.addHandler(ControlHandler(router: router, caller: .web))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    private func request(_ channel: EmbeddedChannel, _ method: HTTPMethod, _ uri: String) throws {
        try channel.writeInbound(
            HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: method, uri: uri)))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
    }

    private func head(_ channel: EmbeddedChannel) throws -> HTTPResponseHead? {
        guard case .head(let head) = try channel.readOutbound(as: HTTPServerResponsePart.self) else { return nil }
        return head
    }

    private func line(_ channel: EmbeddedChannel) throws -> String? {
        guard case .body(.byteBuffer(let body)) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            return nil
        }
        return String(buffer: body)
    }

    @Test func anAnswerHasItsHeadBodyAndEnd() throws {
        let channel = try self.channel()
        try self.request(channel, .GET, "/v1/nothing")
        let head = try #require(try self.head(channel))
        #expect(head.status == .notFound)
        #expect(head.headers["Content-Type"] == ["application/json"])
        #expect(head.headers["Content-Length"] == ["42"])
        #expect(try self.line(channel) == #"{"error":"no such endpoint: /v1/nothing"}"# + "\n")
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == .end(nil))
        try self.request(channel, .GET, "/v1/tasks")
        #expect(try self.head(channel)?.status == .ok)
        #expect(try self.line(channel) == #"{"tasks":[]}"# + "\n")
    }

    @Test func theEventStreamWritesLinesThenItsLastChunk() throws {
        let channel = try self.channel()
        try self.request(channel, .GET, "/v1/events")
        let head = try #require(try self.head(channel))
        #expect(head.headers["Content-Type"] == ["application/x-ndjson"])
        self.manager.events.publishNetwork(.networkLost, Reachability(status: .unreachable))
        channel.embeddedEventLoop.run()
        #expect(try self.line(channel)?.hasPrefix(#"{"event":"network-lost","network":{"#) == true)
        channel.pipeline.fireUserInboundEventTriggered(ControlStreamEnd())
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == .end(nil))
        #expect(!channel.isActive)
        self.manager.events.publishNetwork(.networkLost, Reachability(status: .unreachable))
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
    }

    /// A client that acts as soon as it has the stream's head (here: an event published the
    /// moment the head is flushed) meets the events that follow: the feed subscribed first.
    @Test func theStreamHeadLeavesOnlyOnceTheFeedIsSubscribed() throws {
        let channel = try self.channel(first: PublishOnFirstFlush(manager: self.manager))
        try self.request(channel, .GET, "/v1/events")
        #expect(try self.head(channel)?.status == .ok)
        channel.embeddedEventLoop.run()
        #expect(try self.line(channel)?.hasPrefix(#"{"event":"network-lost","network":{"#) == true)
    }

    /// Events a reader cannot take are counted and reported as one line when it can again.
    @Test func aReaderThatCouldNotTakeEventsGetsAMissedLine() throws {
        let channel = try self.channel()
        try self.request(channel, .GET, "/v1/events")
        _ = try self.head(channel)
        channel.isWritable = false
        for _ in 0..<3 { self.manager.events.publishNetwork(.networkLost, Reachability(status: .unreachable)) }
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.run()
        #expect(try self.line(channel) == #"{"event":"missed","missed":3}"# + "\n")
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
    }

    /// A stream asked for while the daemon stops ends at once.
    @Test func aStreamStartedAfterTheStopEndsAtOnce() async throws {
        let streams = ControlStreams()
        await streams.endAll(within: .seconds(1))
        let channel = try self.channel(streams: streams)
        try self.request(channel, .GET, "/v1/live")
        #expect(try self.head(channel)?.status == .ok)
        var parts: [HTTPServerResponsePart] = []
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) { parts.append(part) }
        #expect(parts.last == .end(nil))
        #expect(!channel.isActive)
    }
}

/// Publishes a network event when the connection first flushes, as a client would act on the
/// first bytes it reads.
private final class PublishOnFirstFlush: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = Any
    private let manager: SessionManager
    private var published = false

    init(manager: SessionManager) {
        self.manager = manager
    }

    func flush(context: ChannelHandlerContext) {
        if !self.published {
            self.published = true
            self.manager.events.publishNetwork(.networkLost, Reachability(status: .unreachable))
        }
        context.flush()
    }
}

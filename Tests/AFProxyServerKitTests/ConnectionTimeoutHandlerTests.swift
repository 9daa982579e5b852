import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyServerKit

/// The connection timers on an embedded channel whose clock the test moves. The callers' own
/// settings (the proxy's 408 with `Via`, the control socket's JSON 408) are tested beside them.
@Suite struct ConnectionTimeoutHandlerTests {
    static let answer = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n"

    private func channel(shedDelay: TimeAmount? = nil, bodyTimeout: TimeAmount? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            ConnectionTimeoutHandler(
                idleTimeout: .seconds(10), requestTimeout: .seconds(3), bodyTimeout: bodyTimeout, shedDelay: shedDelay
            ) {
                ByteBuffer(string: Self.answer)
            })
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// Counts the inbound events of type `Event` that pass.
    private final class EventCounter<Event>: ChannelInboundHandler {
        typealias InboundIn = Any
        var count = 0

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is Event { self.count += 1 }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// A body awaited is timed from its last byte, not its first: a client that keeps sending is
    /// never told, one silent for the body timeout is told once (the handler answers), and no
    /// timer runs while the body is held back (`requestReceived`).
    @Test func aSilentBodyIsToldOnceAndEveryByteRestartsItsTimer() throws {
        let channel = try self.channel(bodyTimeout: .seconds(5))
        let counter = EventCounter<ConnectionTimeoutHandler.BodySilent>()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.writeInbound(ByteBuffer(string: "POST http://h/ HTTP/1.1\r\nContent-Length: 9\r\n\r\n"))
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.requestReceived, promise: nil)
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.bodyAwaited, promise: nil)
        for _ in 0..<3 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(4))
            try channel.writeInbound(ByteBuffer(string: "abc"))
        }
        #expect(counter.count == 0)
        // Held back by the proxy (a suspended task): no timer however long.
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.requestReceived, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(counter.count == 0)
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.bodyAwaited, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(counter.count == 0)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(counter.count == 1)
        channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        #expect(counter.count == 1)
        #expect(channel.isActive)  // the answer is the handler's to write
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }

    @Test func withoutABodyTimeoutAnAwaitedBodyIsNotTimed() throws {
        let channel = try self.channel()
        let counter = EventCounter<ConnectionTimeoutHandler.BodySilent>()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.writeInbound(ByteBuffer(string: "POST http://h/ HTTP/1.1\r\n\r\n"))
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.bodyAwaited, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(600))
        #expect(counter.count == 0)
        #expect(channel.isActive)
    }

    @Test func anIdleConnectionIsToldOnceAfterTheShedDelayAndStillClosesOnTime() throws {
        let channel = try self.channel(shedDelay: .milliseconds(250))
        let counter = EventCounter<ConnectionTimeoutHandler.IdleForAWhile>()
        try channel.pipeline.syncOperations.addHandler(counter)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(counter.count == 0)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        #expect(counter.count == 1)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(counter.count == 1)
        // A request in between: told again a second after it ended, not while it runs.
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.requestReceived, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(counter.count == 1)
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.responseEnding, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(300))
        #expect(counter.count == 2)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(9600))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func withoutAShedDelayAnIdleConnectionIsNeverTold() throws {
        let channel = try self.channel()
        let counter = EventCounter<ConnectionTimeoutHandler.IdleForAWhile>()
        try channel.pipeline.syncOperations.addHandler(counter)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(counter.count == 0)
        #expect(channel.isActive)
    }

    @Test func idleConnectionIsClosedAfterTheIdleTimeout() throws {
        let channel = try self.channel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)  // closed without an answer
    }

    @Test func aRequestStartedButNotFinishedGetsTheAnswerThenTheConnectionCloses() throws {
        let channel = try self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET http://h/ HTTP/1.1\r\n"))
        #expect(try channel.readInbound(as: ByteBuffer.self) != nil)  // passed on to the parser
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: Self.answer))
        #expect(!channel.isActive)
    }

    @Test func aDrippingRequestIsTimedFromItsFirstByte() throws {
        let channel = try self.channel()
        for _ in 0..<4 {
            try channel.writeInbound(ByteBuffer(string: "G"))
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        }
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil)
        #expect(!channel.isActive)
    }

    @Test func noTimerRunsWhileARequestIsAnsweredAndTheIdleTimerRestartsAfter() throws {
        let channel = try self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET http://h/ HTTP/1.1\r\n\r\n"))
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.requestReceived, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .hours(2))  // a long suspended transfer, an event stream
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(string: "more bytes while answering"))
        channel.embeddedEventLoop.advanceTime(by: .hours(2))
        #expect(channel.isActive)
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.responseEnding, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }

    @Test func theNextRequestGetsAFreshRequestTimeout() throws {
        let channel = try self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\n\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.requestReceived, promise: nil)
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.responseEnding, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try channel.writeInbound(ByteBuffer(string: "GET /"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
    }

    @Test func theRequestTimerIsNotDelayedByAnEarlierIdleTimer() throws {
        let channel = try self.channel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        try channel.writeInbound(ByteBuffer(string: "GET"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil)
    }
}

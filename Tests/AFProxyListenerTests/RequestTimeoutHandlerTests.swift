import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyListener

/// The connection timers on an embedded channel whose clock the test moves.
@Suite struct RequestTimeoutHandlerTests {
    private func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            RequestTimeoutHandler(idleTimeout: .seconds(10), headerTimeout: .seconds(3), via: "edge-7"))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// Counts the `IdleForAWhile` events that pass.
    private final class IdleCounter: ChannelInboundHandler {
        typealias InboundIn = Any
        var count = 0

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is RequestTimeoutHandler.IdleForAWhile { self.count += 1 }
            context.fireUserInboundEventTriggered(event)
        }
    }

    @Test func anIdleConnectionIsToldOnceAfterTheShedDelayAndStillClosesOnTime() throws {
        let channel = try self.channel()
        let counter = IdleCounter()
        try channel.pipeline.syncOperations.addHandler(counter)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(counter.count == 0)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        #expect(counter.count == 1)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(counter.count == 1)
        // A request in between: told again a second after it ended, not while it runs.
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.requestStarted, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(counter.count == 1)
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.responseEnded, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(300))
        #expect(counter.count == 2)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(9600))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func idleConnectionIsClosedAfterTheIdleTimeout() throws {
        let channel = try self.channel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)  // closed without an answer
    }

    @Test func aHeadStartedButNotFinishedGets408() throws {
        let channel = try self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET http://h/ HTTP/1.1\r\n"))
        _ = try channel.readInbound(as: ByteBuffer.self)
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        let answer = String(buffer: try #require(try channel.readOutbound(as: ByteBuffer.self)))
        let body = "408 Request Timeout: the request head did not arrive in time\n"
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(answer.contains("\r\nContent-Length: \(body.utf8.count)\r\n"))
        #expect(answer.contains("\r\nVia: 1.1 edge-7\r\n"))  // the configured name, not a fixed one
        #expect(answer.contains("\r\nConnection: close\r\n"))
        #expect(answer.hasSuffix("\r\n\r\n" + body))
        #expect(!channel.isActive)
    }

    @Test func noTimerRunsWhileARequestIsInProgressAndTheIdleTimerRestartsAfter() throws {
        let channel = try self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET http://h/ HTTP/1.1\r\n\r\n"))
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.requestStarted, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .hours(2))  // a long suspended transfer
        #expect(channel.isActive)
        channel.pipeline.triggerUserOutboundEvent(ConnectionPhase.responseEnded, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test func theHeaderTimerIsNotDelayedByAnEarlierIdleTimer() throws {
        let channel = try self.channel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        try channel.writeInbound(ByteBuffer(string: "GET"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil)
    }
}

import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyControl

/// The control connection's timers on an embedded channel whose clock the test moves.
@Suite struct ControlTimeoutHandlerTests {
    private func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            ControlTimeoutHandler(idleTimeout: .seconds(60), requestTimeout: .seconds(10)))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        return channel
    }

    @Test func anIdleConnectionIsClosedQuietlyAfterTheIdleTimeout() throws {
        let channel = try self.channel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }

    @Test func aHalfSentRequestGets408ThenTheConnectionCloses() throws {
        let channel = try self.channel()
        let halfBody = "POST /v1/tasks/1/cancel HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345"
        try channel.writeInbound(ByteBuffer(string: halfBody))
        _ = try channel.readInbound(as: ByteBuffer.self)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        let answer = String(buffer: try #require(try channel.readOutbound(as: ByteBuffer.self)))
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(answer.contains("\r\nConnection: close\r\n"))
        #expect(answer.contains("\r\nDate: "))
        #expect(answer.hasSuffix(#"{"error":"the request did not arrive in full within 10 s"}"# + "\n"))
        #expect(!channel.isActive)
    }

    @Test func aDrippingRequestIsTimedFromItsFirstByte() throws {
        let channel = try self.channel()
        for _ in 0..<11 {
            try channel.writeInbound(ByteBuffer(string: "G"))
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        }
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil)
        #expect(!channel.isActive)
    }

    @Test func noTimerRunsWhileAnsweringAndTheIdleTimerRestartsAfter() throws {
        let channel = try self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET /v1/events HTTP/1.1\r\n\r\n"))
        channel.pipeline.triggerUserOutboundEvent(ControlPhase.requestReceived, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .hours(2))  // a long event stream
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(string: "more bytes while answering"))
        channel.embeddedEventLoop.advanceTime(by: .hours(2))
        #expect(channel.isActive)
        channel.pipeline.triggerUserOutboundEvent(ControlPhase.responseEnding, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }

    @Test func theNextRequestGetsAFreshRequestTimeout() throws {
        let channel = try self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET /v1/stats HTTP/1.1\r\n\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        channel.pipeline.triggerUserOutboundEvent(ControlPhase.requestReceived, promise: nil)
        channel.pipeline.triggerUserOutboundEvent(ControlPhase.responseEnding, promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        try channel.writeInbound(ByteBuffer(string: "GET /v1/st"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }
}

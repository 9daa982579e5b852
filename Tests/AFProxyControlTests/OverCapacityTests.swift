import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyControl

@Suite struct OverCapacityTests {
    @Test func theCapCountsSlotsAndGivesThemBack() {
        let cap = ControlConnectionCap(limit: 2)
        #expect(cap.acquire())
        #expect(cap.acquire())
        #expect(!cap.acquire())
        #expect(cap.count == 2)
        cap.release()
        #expect(cap.acquire())
        #expect(!cap.acquire())
    }

    @Test func aConnectionOverTheCapGets503AndIsLetGo() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(OverCapacityHandler(limit: 64))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        let answer = String(buffer: try #require(try channel.readOutbound(as: ByteBuffer.self)))
        #expect(answer.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(answer.contains("\r\nConnection: close\r\n"))
        #expect(answer.contains("\r\nDate: "))
        #expect(answer.contains(#"{"error":"the control socket is at its limit of 64 connections"#))
        // EmbeddedChannel has no half-closure: shutting the output down closes it all.
        #expect(!channel.isActive)
    }

    @Test func theLingerEndsTheConnectionIfTheClientNeverCloses() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        // Added while active, and with its answer's write held back, so only the timer can close it.
        try channel.pipeline.syncOperations.addHandler(HoldWrites())
        try channel.pipeline.syncOperations.addHandler(OverCapacityHandler(limit: 64, linger: .seconds(1)))
        try channel.writeInbound(ByteBuffer(string: "GET /v1/stats HTTP/1.1\r\n\r\n"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)  // dropped
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
    }
}

/// Never completes a write, like a socket whose peer does not read.
private final class HoldWrites: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {}
    func flush(context: ChannelHandlerContext) {}
}

import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyListener

@Suite struct RefusedConnectionHandlerTests {
    let response = ByteBuffer(string: "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n")

    @Test func theRefusalIsWrittenOnceAndTheConnectionLetGo() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            RefusedConnectionHandler(response: self.response, linger: .seconds(1)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == self.response)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        // EmbeddedChannel has no half-closure: shutting the output down closes it all.
        #expect(!channel.isActive)
    }

    @Test func theLingerEndsTheConnectionIfTheClientNeverCloses() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        // Added while active, with its answer's write held back, so only the timer can close it.
        try channel.pipeline.syncOperations.addHandler(HeldWrites())
        try channel.pipeline.syncOperations.addHandler(
            RefusedConnectionHandler(response: self.response, linger: .seconds(1)))
        try channel.writeInbound(ByteBuffer(string: "GET http://h/ HTTP/1.1\r\n\r\n"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)  // dropped
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
    }

    @Test func refusalsHaveACapOfTheirOwn() {
        let refusals = ConnectionLimiter(limit: ProxyListener.maxRefusals)
        for _ in 0..<ProxyListener.maxRefusals { #expect(refusals.acquire()) }
        #expect(!refusals.acquire())
        refusals.release()
        #expect(refusals.acquire())
    }
}

/// Never completes a write, like a socket whose peer does not read.
private final class HeldWrites: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {}
    func flush(context: ChannelHandlerContext) {}
}

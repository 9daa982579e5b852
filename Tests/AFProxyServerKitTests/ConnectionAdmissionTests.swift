import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyServerKit

@Suite struct ConnectionAdmissionTests {
    let response = ByteBuffer(string: "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n")

    private func connected() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        return channel
    }

    @Test func theLimiterCountsSlotsAndGivesThemBack() {
        let limiter = ConnectionLimiter(limit: 2)
        #expect(limiter.acquire())
        #expect(limiter.acquire())
        #expect(!limiter.acquire())
        #expect(limiter.count == 2)
        limiter.release()
        #expect(limiter.acquire())
        #expect(!limiter.acquire())
    }

    @Test func anAdmittedConnectionGivesItsSlotBackWhenItCloses() throws {
        let admission = ConnectionAdmission(limit: 1, linger: .seconds(1), maxLingering: 1)
        let first = try self.connected()
        #expect(admission.admit(first))
        #expect(!admission.admit(try self.connected()))
        #expect(admission.openConnections == 1)
        try first.close().wait()
        first.embeddedEventLoop.run()  // the close future's callbacks
        #expect(admission.openConnections == 0)
        #expect(admission.admit(try self.connected()))
    }

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
        let channel = try self.connected()
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

    @Test func aRefusalWhoseWriteFailsIsClosedAtOnce() throws {
        let channel = try self.connected()
        try channel.pipeline.syncOperations.addHandler(FailedWrites())
        try channel.pipeline.syncOperations.addHandler(
            RefusedConnectionHandler(response: self.response, linger: .seconds(1)))
        #expect(!channel.isActive)
    }

    @Test func refusalsLingerUpToTheirOwnCapThenCloseAtOnce() throws {
        let admission = ConnectionAdmission(limit: 0, linger: .seconds(1), maxLingering: 2)
        var lingering: [EmbeddedChannel] = []
        for _ in 0..<2 {
            let channel = try self.connected()
            try channel.pipeline.syncOperations.addHandler(HeldWrites())
            try admission.refuse(channel, with: self.response).wait()
            #expect(channel.isActive)  // its answer held back: lingering
            lingering.append(channel)
        }
        #expect(admission.lingering.count == 2)
        let third = try self.connected()
        try admission.refuse(third, with: self.response).wait()
        #expect(try third.readOutbound(as: ByteBuffer.self) == self.response)
        #expect(!third.isActive)  // written and closed, no linger
        try lingering[0].close().wait()
        lingering[0].embeddedEventLoop.run()
        #expect(admission.lingering.count == 1)
        let fourth = try self.connected()
        try fourth.pipeline.syncOperations.addHandler(HeldWrites())
        try admission.refuse(fourth, with: self.response).wait()
        #expect(fourth.isActive)
    }
}

/// Never completes a write, like a socket whose peer does not read.
private final class HeldWrites: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {}
    func flush(context: ChannelHandlerContext) {}
}

/// Fails every write, like a socket the peer has reset.
private final class FailedWrites: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.ioOnClosedChannel)
    }
    func flush(context: ChannelHandlerContext) {}
}

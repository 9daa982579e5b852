import AFProxyModel
import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyListener

/// The proxy's settings of the kit's timers and cap: what its answers say. The timers themselves
/// are tested in AFProxyServerKitTests.
@Suite struct ProxyListenerLimitsTests {
    private func channel() throws -> EmbeddedChannel {
        var configuration = ListenerConfiguration()
        configuration.idleTimeout = .seconds(10)
        configuration.headerTimeout = .seconds(3)
        configuration.viaName = "edge-7"
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ProxyListener.timeoutHandler(configuration))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    @Test func aHeadStartedButNotFinishedGets408NamingThisProxy() throws {
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

    @Test func theIdleTimeoutAndTheShedDelayAreTheConfiguredOnes() throws {
        let channel = try self.channel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)  // closed without an answer
        #expect(ProxyListener.shedDelay == .milliseconds(250))
        #expect(ProxyListener.maxRefusals == 32 && ProxyListener.lingerTime == .seconds(1))
    }
}

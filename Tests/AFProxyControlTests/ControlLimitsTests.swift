import AFProxyServerKit
import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyControl

/// The control socket's settings of the kit's timers and cap: what its answers say. The timers
/// themselves are tested in AFProxyServerKitTests.
@Suite struct ControlLimitsTests {
    @Test func aHalfSentRequestGetsTheAPIs408AfterTheRequestTimeout() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ControlLimits.timeoutHandler())
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        let halfBody = "POST /v1/tasks/1/cancel HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345"
        try channel.writeInbound(ByteBuffer(string: halfBody))
        _ = try channel.readInbound(as: ByteBuffer.self)
        channel.embeddedEventLoop.advanceTime(by: ControlLimits.requestTimeout - .seconds(1))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        let answer = String(buffer: try #require(try channel.readOutbound(as: ByteBuffer.self)))
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(answer.contains("\r\nConnection: close\r\n"))
        #expect(answer.contains("\r\nDate: "))
        #expect(answer.hasSuffix(#"{"error":"the request did not arrive in full within 10 s"}"# + "\n"))
        #expect(!channel.isActive)
    }

    @Test func anIdleConnectionIsClosedQuietlyAfterTheIdleTimeout() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ControlLimits.timeoutHandler())
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        channel.embeddedEventLoop.advanceTime(by: ControlLimits.idleTimeout - .seconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }

    @Test func aConnectionOverTheCapGetsTheAPIs503AndIsLetGo() throws {
        let admission = ControlLimits.admission()
        #expect(admission.limit == ControlLimits.maxConnections)
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        try admission.refuse(channel, with: ControlLimits.overCapacity(limit: admission.limit).bytes()).wait()
        let answer = String(buffer: try #require(try channel.readOutbound(as: ByteBuffer.self)))
        #expect(answer.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(answer.contains("\r\nConnection: close\r\n"))
        #expect(answer.contains("\r\nDate: "))
        #expect(answer.contains(#"{"error":"the control socket is at its limit of 64 connections"#))
        // EmbeddedChannel has no half-closure: shutting the output down closes it all.
        #expect(!channel.isActive)
    }
}

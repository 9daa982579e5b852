import AFProxyModel
import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyTunnel

@Suite struct UpstreamProxyHandshakeHandlerTests {
    private let proxy = UpstreamProxy(scheme: .http, host: "127.0.0.1", port: 3128)

    /// An active channel, as the connector's is when the handshake starts.
    private static func connected() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        return channel
    }

    @Test func sendsTheConnectAndLeavesThePipelineWithTheOriginsFirstBytes() throws {
        let channel = try Self.connected()
        var result: Result<ByteBuffer?, TaskFailure>?
        let handler = UpstreamProxyHandshakeHandler(
            UpstreamProxyHandshake(proxy: self.proxy, host: "example.org", port: 443)
        ) { result = $0 }
        try channel.pipeline.syncOperations.addHandler(handler)
        let sent = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: sent) == "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n")

        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\n"))
        #expect(result == nil)
        try channel.writeInbound(ByteBuffer(string: "\r\nhello"))
        #expect(try result?.get() == ByteBuffer(string: "hello"))
        // Gone from the pipeline: what comes next passes by untouched.
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.context(handler: handler) }
        try channel.writeInbound(ByteBuffer(string: "more"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "more"))
        _ = try channel.finish()
    }

    @Test func aRefusalOrAnEarlyCloseFailsOnceAndClosesTheChannel() throws {
        let channel = try Self.connected()
        var results: [Result<ByteBuffer?, TaskFailure>] = []
        try channel.pipeline.syncOperations.addHandler(
            UpstreamProxyHandshakeHandler(UpstreamProxyHandshake(proxy: self.proxy, host: "example.org", port: 443)) {
                results.append($0)
            })
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"))
        #expect(results.count == 1)
        #expect(throws: TaskFailure.self) { try results[0].get() }
        #expect((try? results[0].get()) == nil)
        if case .failure(let failure) = results[0] { #expect(failure.code == "upstream-proxy-auth") }
        #expect(!channel.isActive)

        let closing = try Self.connected()
        var closed: Result<ByteBuffer?, TaskFailure>?
        try closing.pipeline.syncOperations.addHandler(
            UpstreamProxyHandshakeHandler(UpstreamProxyHandshake(proxy: self.proxy, host: "example.org", port: 443)) {
                closed = $0
            })
        _ = try closing.finish(acceptAlreadyClosed: true)
        if case .failure(let failure)? = closed {
            #expect(failure.code == "upstream-proxy-refused")
        } else {
            Issue.record("an early close was not a failure: \(String(describing: closed))")
        }
    }
}

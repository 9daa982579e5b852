import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AFProxyControl

/// Parser errors answered, with NIO's real decoder under the control socket's limits.
@Suite struct ControlParserErrorHandlerTests {
    private func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withErrorHandling: false, withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: ControlLimits.decoder)
        try channel.pipeline.syncOperations.addHandler(ControlParserErrorHandler())
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        return channel
    }

    private func answer(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    @Test func aHeadOverTheLimitGets431() throws {
        let channel = try self.channel()
        let field = "X-Big: " + String(repeating: "a", count: ControlLimits.maxHeaderBytes) + "\r\n"
        _ = try? channel.writeInbound(ByteBuffer(string: "GET /v1/stats HTTP/1.1\r\nHost: afproxy\r\n" + field))
        let answer = try self.answer(channel)
        #expect(answer.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        #expect(answer.contains("\r\nConnection: close\r\n"))
        #expect(answer.contains("\r\nDate: "))
        #expect(answer.hasSuffix(#"{"error":"the request head is over 16384 bytes"}"# + "\n"))
        #expect(!channel.isActive)
    }

    @Test func aHeadWithinTheLimitPasses() throws {
        let channel = try self.channel()
        let field = "X-Big: " + String(repeating: "a", count: ControlLimits.maxHeaderBytes / 2) + "\r\n"
        try channel.writeInbound(ByteBuffer(string: "GET /v1/stats HTTP/1.1\r\nHost: afproxy\r\n" + field + "\r\n"))
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(head.uri == "/v1/stats")
        #expect(channel.isActive)
    }

    @Test func aMalformedRequestGets400() throws {
        let channel = try self.channel()
        _ = try? channel.writeInbound(ByteBuffer(string: "GET /v1/stats HTTP/1.1\r\nno colon here\r\n\r\n"))
        _ = try? channel.writeInbound(ByteBuffer(string: "more bytes after the error"))
        let answer = try self.answer(channel)
        #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(answer.components(separatedBy: "HTTP/1.1").count == 2)  // answered once
        #expect(answer.contains(#"{"error":"malformed request ("#))
        #expect(!channel.isActive)
    }

    @Test func anErrorDuringAnAnswerOnlyCloses() throws {
        // The handler alone: in the full pipeline NIO's pipelining handler holds such an error back
        // until the answer ends.
        let channel = EmbeddedChannel(handler: ControlParserErrorHandler())
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        _ = try channel.readOutbound(as: HTTPServerResponsePart.self)
        channel.pipeline.fireErrorCaught(HTTPParserError.invalidHeaderToken)
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
        #expect(!channel.isActive)
    }
}

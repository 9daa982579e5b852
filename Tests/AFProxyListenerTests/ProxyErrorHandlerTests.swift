import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AFProxyListener

/// What the HTTP parser rejects becomes one refusal travelling inbound behind the requests parsed
/// before it, with NIO's real decoder in front as in the listener's pipeline.
@Suite struct ProxyErrorHandlerTests {
    private struct OtherError: Error, Equatable {}

    private func channel(maxHeaderBytes: Int = 1024) throws -> (EmbeddedChannel, InboundRecorder<HTTPServerRequestPart>)
    {
        let channel = EmbeddedChannel()
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = maxHeaderBytes
        limits.maxHeaderFieldSize = maxHeaderBytes
        let recorder = InboundRecorder<HTTPServerRequestPart>()
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(
            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, limitConfiguration: limits)))
        try sync.addHandler(ProxyErrorHandler())
        try sync.addHandler(recorder)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, recorder)
    }

    /// The refusals carried by `MalformedRequest` events, in order.
    private func refusals(_ recorder: InboundRecorder<HTTPServerRequestPart>) -> [ProxyRefusal] {
        recorder.events.compactMap { ($0 as? ProxyErrorHandler.MalformedRequest)?.refusal }
    }

    /// The request parts as `head URI` / `end`, for comparing whole sequences.
    private func parts(_ recorder: InboundRecorder<HTTPServerRequestPart>) -> [String] {
        recorder.reads.map { part in
            switch part {
            case .head(let head): "head \(head.uri)"
            case .body(let body): "body \(String(buffer: body))"
            case .end: "end"
            }
        }
    }

    @Test func aMalformedRequestBehindAValidOneComesAfterItAsOne400() throws {
        let (channel, recorder) = try self.channel()
        try channel.writeInbound(
            ByteBuffer(
                string:
                    "GET http://h/first HTTP/1.1\r\nHost: h\r\n\r\nGET http://h/second HTTP/1.1\r\nno colon here\r\n\r\n"
            ))
        #expect(self.parts(recorder) == ["head http://h/first", "end"])
        #expect(
            self.refusals(recorder) == [ProxyRefusal(.badRequest, "malformed request (invalid character in header)")])
        #expect(recorder.errors.isEmpty)
        // The refusal follows the request parsed before it: a read, a read, then the event.
        guard recorder.seen.count == 3, case .event = recorder.seen[2] else {
            Issue.record("the refusal is not last: \(recorder.seen)")
            return
        }
    }

    @Test func aHeaderSectionOverTheLimitGets431() throws {
        let (channel, recorder) = try self.channel(maxHeaderBytes: 200)
        let field = "X-Big: " + String(repeating: "a", count: 300) + "\r\n"
        try channel.writeInbound(ByteBuffer(string: "GET http://h/ HTTP/1.1\r\nHost: h\r\n" + field + "\r\n"))
        #expect(
            self.refusals(recorder) == [
                ProxyRefusal(.requestHeaderFieldsTooLarge, "the request header section is too large")
            ])
        #expect(recorder.reads.isEmpty)
        #expect(recorder.errors.isEmpty)
    }

    /// Smuggling attempts: framing the parser cannot trust is refused as framing.
    @Test func conflictingFramingGets400NamingIt() throws {
        let (channel, recorder) = try self.channel()
        try channel.writeInbound(
            ByteBuffer(
                string:
                    "POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"))
        #expect(
            self.refusals(recorder) == [
                ProxyRefusal(.badRequest, "invalid or conflicting message framing (unexpected content-length header)")
            ])
        #expect(recorder.reads.isEmpty)
    }

    @Test func aBadContentLengthGets400NamingTheFraming() throws {
        let (channel, recorder) = try self.channel()
        try channel.writeInbound(
            ByteBuffer(string: "POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\nab"))
        #expect(
            self.refusals(recorder) == [
                ProxyRefusal(
                    .badRequest, "invalid or conflicting message framing (invalid character in content-length header)")
            ])
    }

    /// Nothing behind a malformed request can be parsed: later bytes, and later parser errors,
    /// neither refuse again nor surface as errors.
    @Test func onlyOneRefusalAndWhatFollowsIsSwallowed() throws {
        let (channel, recorder) = try self.channel()
        try channel.writeInbound(ByteBuffer(string: "GET http://h/ HTTP/1.1\r\nbad header\r\n\r\n"))
        try channel.writeInbound(ByteBuffer(string: "GET http://h/again HTTP/1.1\r\nHost: h\r\n\r\n"))
        try channel.writeInbound(ByteBuffer(string: "more\r\n\r\n"))
        channel.pipeline.fireErrorCaught(HTTPParserError.invalidMethod)
        #expect(self.refusals(recorder).count == 1)
        #expect(recorder.events.count == 1)
        #expect(recorder.reads.isEmpty)
        #expect(recorder.errors.isEmpty)
    }

    @Test func otherErrorsArePassedOnBeforeAndAfterARefusal() throws {
        let (channel, recorder) = try self.channel()
        channel.pipeline.fireErrorCaught(OtherError())
        // Before any refusal, even the decoder's error state is not this handler's to hide.
        channel.pipeline.fireErrorCaught(ByteToMessageDecoderError.dataReceivedInErrorState(OtherError(), ByteBuffer()))
        try channel.writeInbound(ByteBuffer(string: "GET http://h/ HTTP/1.1\r\nbad header\r\n\r\n"))
        channel.pipeline.fireErrorCaught(ChannelError.ioOnClosedChannel)
        #expect(recorder.errors.count == 3)
        #expect(recorder.errors.first as? OtherError == OtherError())
        if case .dataReceivedInErrorState(let inner, _)? = recorder.errors.dropFirst().first
            as? ByteToMessageDecoderError
        {
            #expect(inner as? OtherError == OtherError())
        } else {
            Issue.record("the decoder's error was not passed on: \(recorder.errors)")
        }
        #expect(recorder.errors.last as? ChannelError == .ioOnClosedChannel)
        #expect(self.refusals(recorder).count == 1)
    }

    @Test func eachParserErrorMapsToItsRefusal() {
        #expect(
            ProxyErrorHandler.refusal(for: .headerOverflow)
                == ProxyRefusal(.requestHeaderFieldsTooLarge, "the request header section is too large"))
        #expect(
            ProxyErrorHandler.refusal(for: .invalidContentLength)
                == ProxyRefusal(
                    .badRequest, "invalid or conflicting message framing (invalid character in content-length header)"))
        #expect(
            ProxyErrorHandler.refusal(for: .unexpectedContentLength)
                == ProxyRefusal(
                    .badRequest, "invalid or conflicting message framing (unexpected content-length header)"))
        #expect(
            ProxyErrorHandler.refusal(for: .invalidMethod)
                == ProxyRefusal(.badRequest, "malformed request (invalid HTTP method)"))
        #expect(
            ProxyErrorHandler.refusal(for: .invalidChunkSize)
                == ProxyRefusal(.badRequest, "malformed request (invalid character in chunk size header)"))
        // Every refusal closes: the framing of what follows is in doubt.
        #expect(ProxyErrorHandler.refusal(for: .invalidVersion).closeConnection)
    }
}

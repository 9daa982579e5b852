@testable import AFProxyCurl
import AFProxyModel
import Testing

@Suite struct ResponseHeadParserTests {
    private func feed(_ parser: inout ResponseHeadParser, _ line: String) -> ProxyResponseHead? {
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBytes { parser.feed(UnsafeRawBufferPointer($0)) }
    }

    @Test func skipsInformationalHeadsAndFoldsContinuationLines() {
        var parser = ResponseHeadParser()
        #expect(self.feed(&parser, "HTTP/1.1 100 Continue\r\n") == nil)
        #expect(self.feed(&parser, "\r\n") == nil)
        #expect(self.feed(&parser, "HTTP/1.1 201 Created Fine\r\n") == nil)
        #expect(self.feed(&parser, "Content-Length: 5\r\n") == nil)
        #expect(self.feed(&parser, "X-Long: a\r\n") == nil)
        #expect(self.feed(&parser, "\tb\r\n") == nil)
        let head = self.feed(&parser, "\r\n")
        #expect(head == ProxyResponseHead(
            status: 201, reason: "Created Fine", version: "1.1",
            headers: [.init("Content-Length", "5"), .init("X-Long", "a b")]))
        #expect(head?.contentLength == 5)
        // Trailers after the head are not a second head.
        #expect(self.feed(&parser, "X-Trailer: 1\r\n") == nil)
        #expect(self.feed(&parser, "\r\n") == nil)
    }

    @Test func failureKindsMapToStatuses() {
        #expect(UpstreamFailure(.unreachable, "x").httpStatus == 502)
        #expect(UpstreamFailure(.timeout, "x").httpStatus == 504)
        #expect(UpstreamFailure(.upstreamBroken, "x").httpStatus == 502)
        #expect(UpstreamFailure(.badRequest, "x").httpStatus == 400)
    }
}

import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AFProxyMetrics

@Suite struct MetricsHTTPHandlerTests {
    private func answer(_ method: HTTPMethod, _ uri: String) throws -> (HTTPResponseHead, String) {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler { Array("up 1\n".utf8) })
        try channel.writeInbound(
            HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: method, uri: uri)))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        var head: HTTPResponseHead?
        var body = ""
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            switch part {
            case .head(let value): head = value
            case .body(.byteBuffer(let buffer)): body += String(buffer: buffer)
            default: break
            }
        }
        return (try #require(head), body)
    }

    @Test func servesGetMetrics() throws {
        let (head, body) = try self.answer(.GET, "/metrics")
        #expect(head.status == .ok)
        #expect(head.headers["Content-Type"] == ["text/plain; version=0.0.4; charset=utf-8"])
        #expect(head.headers["Content-Length"] == ["5"])
        #expect(body == "up 1\n")
        #expect(try self.answer(.GET, "/metrics?name[]=up").0.status == .ok)
    }

    @Test func answers404ToEverythingElse() throws {
        #expect(try self.answer(.GET, "/").0.status == .notFound)
        #expect(try self.answer(.GET, "/metricsx").0.status == .notFound)
        #expect(try self.answer(.POST, "/metrics").0.status == .notFound)
        #expect(try self.answer(.GET, "/v1/tasks").0.status == .notFound)
    }
}

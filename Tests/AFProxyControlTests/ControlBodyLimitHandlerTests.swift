import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AFProxyControl

@Suite struct ControlBodyLimitHandlerTests {
    private func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            ControlBodyLimitHandler(maxBodyBytes: 100, maxEditBodyBytes: 1000))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/control.sock")).wait()
        return channel
    }

    private func head(
        _ headers: [(String, String)], method: HTTPMethod = .POST, uri: String = "/v1/tasks/1/cancel"
    ) -> HTTPServerRequestPart {
        .head(HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: HTTPHeaders(headers)))
    }

    /// An edit at a hold carries a whole body: its own limit, for its paths only.
    @Test func anEditHasItsOwnLimit() throws {
        for (method, uri) in [
            (HTTPMethod.PATCH, "/v1/tasks/1/request"), (.POST, "/v1/tasks/1/respond"), (.POST, "/v1/tasks/1/replay"),
        ] {
            let channel = try self.channel()
            try channel.writeInbound(self.head([("Content-Length", "900")], method: method, uri: uri))
            #expect(try channel.readInbound(as: HTTPServerRequestPart.self) != nil, "\(method) \(uri)")
            try channel.writeInbound(self.head([("Content-Length", "1001")], method: method, uri: uri))
            #expect(try self.refusal(channel).0.status.code == 413)
        }
        let channel = try self.channel()
        try channel.writeInbound(self.head([("Content-Length", "900")], uri: "/v1/tasks/1/request"))
        #expect(try self.refusal(channel).0.status.code == 413)  // a POST there is no edit
    }

    /// The refusal written: head, JSON body, end.
    private func refusal(_ channel: EmbeddedChannel) throws -> (HTTPResponseHead, String) {
        guard case .head(let head) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            throw Unexpected()
        }
        guard case .body(.byteBuffer(let body)) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            throw Unexpected()
        }
        guard case .end = try channel.readOutbound(as: HTTPServerResponsePart.self) else { throw Unexpected() }
        return (head, String(buffer: body))
    }

    private struct Unexpected: Error {}

    @Test func aDeclaredBodyOverTheLimitIsRefusedBeforeItArrives() throws {
        let channel = try self.channel()
        try channel.writeInbound(self.head([("Content-Length", "104857600")]))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil)  // the request goes no further
        let (head, body) = try self.refusal(channel)
        #expect(head.status.code == 413)
        #expect(head.status.reasonPhrase == "Content Too Large")
        #expect(head.headers["Content-Type"] == ["application/json"])
        #expect(head.headers["Connection"] == ["close"])
        #expect(head.headers["Date"].count == 1)
        #expect(head.headers["Content-Length"] == [String(body.utf8.count)])
        #expect(body.hasPrefix(#"{"error":"the request declares a body of 104857600 bytes"#))
        #expect(!channel.isActive)
    }

    @Test func aChunkedBodyIsRefusedOnceItsPartsPassTheLimit() throws {
        let channel = try self.channel()
        try channel.writeInbound(self.head([("Transfer-Encoding", "chunked")]))
        try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(repeating: 0x61, count: 60)))
        #expect(channel.isActive)
        try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(repeating: 0x61, count: 60)))
        #expect(try self.refusal(channel).0.status.code == 413)
        #expect(!channel.isActive)
        #expect(throws: Never.self) { try channel.writeInbound(HTTPServerRequestPart.end(nil)) }
    }

    @Test func bodiesWithinTheLimitPassAndTheCountStartsOverForEachRequest() throws {
        let channel = try self.channel()
        for _ in 0..<3 {
            try channel.writeInbound(self.head([("Content-Length", "100")]))
            try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(repeating: 0x61, count: 100)))
            try channel.writeInbound(HTTPServerRequestPart.end(nil))
        }
        var parts = 0
        while try channel.readInbound(as: HTTPServerRequestPart.self) != nil { parts += 1 }
        #expect(parts == 9)
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
        #expect(channel.isActive)
    }
}

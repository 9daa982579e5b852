import AFProxyModel
import NIOHTTP1
import Testing

@testable import AFProxyListener

@Suite struct ClientResponseHeadTests {
    private func make(
        _ fields: [(String, String)], status: Int = 200, reason: String = "OK", head: Bool = false,
        client: HTTPVersion = .http1_1, keepAlive: Bool = true
    ) -> Result<ClientResponseHead, ProxyRefusal> {
        let origin = ProxyResponseHead(
            status: status, reason: reason, version: "1.1", headers: fields.map { HTTPHeaderField($0.0, $0.1) })
        return ClientResponseHead.make(
            origin, requestIsHead: head, clientVersion: client, keepAlive: keepAlive, via: "afproxy")
    }

    @Test func keepsTheOriginsReasonPhrase() throws {
        let response = try self.make([("Content-Length", "2")], reason: "funky chunky!").get()
        #expect(response.head.status.code == 200)
        #expect(response.head.status.reasonPhrase == "funky chunky!")
        #expect(response.framing == .length)
        #expect(response.head.headers["content-length"] == ["2"])
        #expect(response.head.headers["via"] == ["1.1 afproxy"])
    }

    private func makeHTTP2(
        _ fields: [(String, String)], status: Int = 200, client: HTTPVersion = .http1_1, keepAlive: Bool = true
    ) throws -> ClientResponseHead {
        let origin = ProxyResponseHead(
            status: status, reason: "", version: "2", headers: fields.map { HTTPHeaderField($0.0, $0.1) })
        return try ClientResponseHead.make(
            origin, requestIsHead: false, clientVersion: client, keepAlive: keepAlive, via: "afproxy"
        ).get()
    }

    /// An HTTP/2 answer has no reason phrase and no chunked coding: the HTTP/1.1 client gets the
    /// standard phrase, the origin's length, or chunks on a connection that stays open.
    @Test func framesAnHTTP2AnswerForAnHTTP1Client() throws {
        let sized = try self.makeHTTP2([("content-length", "5")])
        #expect(sized.head.version == .http1_1)
        #expect(sized.head.status.code == 200)
        #expect(sized.head.status.reasonPhrase == "OK")
        #expect(sized.framing == .length)
        #expect(sized.head.headers["content-length"] == ["5"])
        #expect(sized.head.headers["via"] == ["2 afproxy"])
        #expect(!sized.closeAfter)

        let streamed = try self.makeHTTP2([("content-type", "text/plain")])
        #expect(streamed.framing == .chunked)
        #expect(streamed.head.headers["transfer-encoding"] == ["chunked"])
        #expect(!streamed.closeAfter)

        let old = try self.makeHTTP2([], client: .http1_0)
        #expect(old.framing == .close)
        #expect(old.closeAfter)

        #expect(try self.makeHTTP2([], status: 404).head.status.reasonPhrase == "Not Found")
        #expect(try self.makeHTTP2([], status: 599).head.status.reasonPhrase == "")
        let interim = ClientResponseHead.interim(
            ProxyResponseHead(status: 103, reason: "", version: "2", headers: []), clientVersion: .http1_1,
            via: "afproxy")
        #expect(interim?.status.reasonPhrase == "Early Hints")
    }

    @Test func keepsANotModifiedLengthAndAHeadLength() throws {
        let notModified = try self.make([("Content-Length", "1234")], status: 304, reason: "Not Modified").get()
        #expect(notModified.head.headers["content-length"] == ["1234"])
        #expect(notModified.framing == .none)
        let head = try self.make([("Content-Length", "99")], head: true).get()
        #expect(head.head.headers["content-length"] == ["99"])
        #expect(head.framing == .none)
    }

    @Test func aTransferCodingIsNamedOnlyOnAHeadAnswer() throws {
        let head = try self.make([("Transfer-Encoding", "chunked")], head: true).get()
        #expect(head.head.headers["transfer-encoding"] == ["chunked"])
        #expect(head.framing == .none)
        for status in [204, 304] {
            let bodiless = try self.make([("Transfer-Encoding", "chunked")], status: status).get()
            #expect(bodiless.head.headers["transfer-encoding"] == [])
            #expect(bodiless.framing == .none)
        }
    }

    @Test func passesAppliedCodingsToAnHTTP11Client() throws {
        let coded = try self.make([("Transfer-Encoding", "gzip, chunked")]).get()
        #expect(coded.head.headers["transfer-encoding"] == ["gzip, chunked"])
        #expect(coded.framing == .chunked)
        let closeDelimited = try self.make([("Transfer-Encoding", "gzip")]).get()
        #expect(closeDelimited.head.headers["transfer-encoding"] == ["gzip, chunked"])
        #expect(closeDelimited.framing == .chunked)
        let plain = try self.make([("Transfer-Encoding", "chunked")]).get()
        #expect(plain.head.headers["transfer-encoding"] == ["chunked"])
        #expect(plain.framing == .chunked)
    }

    @Test func anHTTP10ClientGetsCloseDelimitedBodiesOrA502() throws {
        let plain = try self.make([("Transfer-Encoding", "chunked")], client: .http1_0).get()
        #expect(plain.framing == .close)
        #expect(plain.closeAfter)
        #expect(plain.head.headers["transfer-encoding"].isEmpty)
        guard case .failure(let refusal) = self.make([("Transfer-Encoding", "gzip, chunked")], client: .http1_0) else {
            Issue.record("an HTTP/1.0 client cannot receive a transfer coding")
            return
        }
        #expect(refusal.status == .badGateway)
    }

    /// An HTTP/2 client: its stream frames the body (no chunks of ours, no Transfer-Encoding),
    /// and nothing connection-specific is named, even when the stream closes after the answer.
    @Test func anHTTP2ClientGetsBodiesFramedByItsStream() throws {
        let h2 = HTTPVersion(major: 2, minor: 0)
        let open = try self.make([("Transfer-Encoding", "chunked")], client: h2, keepAlive: false).get()
        #expect(open.framing == .frames)
        #expect(open.head.headers["transfer-encoding"].isEmpty && open.head.headers["connection"].isEmpty)
        let sized = try self.make([("Content-Length", "5")], client: h2).get()
        #expect(sized.framing == .length && sized.head.headers["content-length"] == ["5"])
        let head = try self.make([("Transfer-Encoding", "chunked")], head: true, client: h2).get()
        #expect(head.framing == .none && head.head.headers["transfer-encoding"].isEmpty)
        guard case .failure(let refusal) = self.make([("Transfer-Encoding", "gzip, chunked")], client: h2) else {
            Issue.record("a transfer coding cannot travel over HTTP/2")
            return
        }
        #expect(refusal.status == .badGateway)
    }

    @Test func interimHeadsGoOnlyToHTTP11Clients() {
        let early = ProxyResponseHead(
            status: 103, reason: "Early Hints", version: "1.1", headers: [.init("Link", "<x>")])
        #expect(ClientResponseHead.interim(early, clientVersion: .http1_1, via: "afproxy")?.status.code == 103)
        #expect(ClientResponseHead.interim(early, clientVersion: .http1_0, via: "afproxy") == nil)
        let hundred = ProxyResponseHead(status: 100, reason: "Continue", version: "1.1", headers: [])
        // Whether a 100 goes on is the connection's call (ClientConnectionState.forwardsContinue).
        #expect(ClientResponseHead.interim(hundred, clientVersion: .http1_1, via: "afproxy")?.status.code == 100)
    }
}

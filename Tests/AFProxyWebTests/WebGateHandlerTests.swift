import AFProxyModel
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AFProxyWeb

/// The gate in memory: what it answers itself (the page, refusals, the entry with the token), what
/// it lets through to the control API, and the header fields every answer gets.
@Suite struct WebGateHandlerTests {
    static let token = String(repeating: "5a", count: 32)
    static let access = WebAccess(token: token, host: "127.0.0.1", port: 3129)
    static let snapshot = #"{"event":"snapshot","live":[7],"tasks":[{"id":7,"url":"http://a/</script><!--"}]}"#

    private func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(WebHeadersHandler())
        try channel.pipeline.syncOperations.addHandler(
            WebGateHandler(access: { Self.access }, snapshot: { Array(Self.snapshot.utf8) }))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3129)).wait()
        return channel
    }

    private func send(
        _ channel: EmbeddedChannel, _ method: HTTPMethod, _ uri: String, _ headers: [(String, String)],
        body: String? = nil
    ) throws {
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: HTTPHeaders(headers))
        try channel.writeInbound(HTTPServerRequestPart.head(head))
        if let body { try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(string: body))) }
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
    }

    private func answer(_ channel: EmbeddedChannel) throws -> (HTTPResponseHead, String) {
        guard case .head(let head) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            throw Unexpected()
        }
        var text = ""
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            switch part {
            case .body(.byteBuffer(let buffer)): text += String(buffer: buffer)
            case .end: return (head, text)
            default: throw Unexpected()
            }
        }
        throw Unexpected()
    }

    private struct Unexpected: Error {}

    private var cookie: (String, String) { ("Cookie", "afproxy-token-3129=\(Self.token)") }
    private let host = ("Host", "127.0.0.1:3129")

    @Test func thePageNeedsTheTokenAndComesWithItsProtections() throws {
        let channel = try self.channel()
        try self.send(channel, .GET, "/", [self.host])
        let (refused, message) = try self.answer(channel)
        #expect(refused.status == .unauthorized)
        #expect(message.contains("afproxyctl web"))
        #expect(refused.headers["Connection"] == ["close"])

        let again = try self.channel()
        try self.send(again, .GET, "/", [self.host, self.cookie])
        let (head, page) = try self.answer(again)
        #expect(head.status == .ok)
        #expect(head.headers["Content-Type"] == ["text/html; charset=utf-8"])
        #expect(head.headers["Content-Length"] == [String(page.utf8.count)])
        #expect(head.headers["X-Content-Type-Options"] == ["nosniff"])
        #expect(head.headers["Cache-Control"] == ["no-store"])
        // One policy, with a nonce that the page's inline script and style carry.
        let policies = head.headers["Content-Security-Policy"]
        #expect(policies.count == 1)
        let policy = try #require(policies.first)
        let nonce = try #require(policy.firstMatch(of: /script-src 'nonce-([0-9a-f]{64})'/)?.1)
        #expect(policy.hasPrefix("default-src 'self'") && policy.contains("style-src 'nonce-\(nonce)'"))
        #expect(!policy.contains("unsafe-inline"))
        #expect(page.contains(#"<script nonce="\#(nonce)">"#) && page.contains(#"<style nonce="\#(nonce)">"#))
        #expect(page.contains("function handle(line)") && page.contains("#task-rows"))
        #expect(try again.readInbound(as: HTTPServerRequestPart.self) == nil)  // answered here
        // Keep-alive: the next request on the same connection is served too, with a new nonce.
        try self.send(again, .GET, "/", [self.host, self.cookie])
        let next = try #require(try self.answer(again).0.headers["Content-Security-Policy"].first)
        #expect(next.firstMatch(of: /script-src 'nonce-([0-9a-f]{64})'/)?.1 != nonce)
        // The page's files are in it: they are not served apart any more; the icon is.
        try self.send(again, .GET, "/app.js", [self.host, self.cookie])
        #expect(try self.answer(again).0.status == .notFound)
        let icon = try self.channel()
        try self.send(icon, .GET, "/favicon.svg", [self.host, self.cookie])
        let (iconHead, _) = try self.answer(icon)
        #expect(iconHead.headers["Content-Type"] == ["image/svg+xml"])
        #expect(iconHead.headers["Content-Security-Policy"] == [WebHeadersHandler.contentSecurityPolicy])
    }

    @Test func thePageCarriesTheFirstSnapshotThatNoTaskCanBreakOutOf() throws {
        let channel = try self.channel()
        try self.send(channel, .GET, "/", [self.host, self.cookie])
        let (_, page) = try self.answer(channel)
        let data = try #require(
            page.firstMatch(of: /<script id="first-snapshot" type="application\/json">(.*?)<\/script>/)?.1)
        #expect(data == Self.snapshot.replacing("<", with: #"\u003c"#))
        // The escaped text is the same JSON: `<` comes back when it is read.
        let decoded = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
        let task = try #require((decoded?["tasks"] as? [[String: Any]])?.first)
        #expect(task["url"] as? String == "http://a/</script><!--")
        // Every `</script>` on the page closes one of its two scripts.
        #expect(page.ranges(of: "</script>").count == 2)
    }

    @Test func theEntryWithTheTokenSetsTheCookieAndRedirects() throws {
        let channel = try self.channel()
        try self.send(channel, .GET, "/?token=\(Self.token)", [self.host])
        let (head, _) = try self.answer(channel)
        #expect(head.status == .seeOther)
        #expect(head.headers["Location"] == ["/"])
        #expect(head.headers["Set-Cookie"] == ["afproxy-token-3129=\(Self.token); Path=/; HttpOnly; SameSite=Strict"])
    }

    @Test func theAPIGoesThroughWithItsBody() throws {
        let channel = try self.channel()
        try self.send(
            channel, .POST, "/v1/downloads", [self.host, self.cookie, ("Origin", "http://127.0.0.1:3129")],
            body: #"{"url":"http://x/"}"#)
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            throw Unexpected()
        }
        #expect(head.uri == "/v1/downloads")
        guard case .body(let body) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            throw Unexpected()
        }
        #expect(String(buffer: body) == #"{"url":"http://x/"}"#)
        guard case .end = try channel.readInbound(as: HTTPServerRequestPart.self) else { throw Unexpected() }
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
    }

    @Test func aRefusedRequestsBodyNeverReachesTheAPI() throws {
        let channel = try self.channel()
        try self.send(
            channel, .POST, "/v1/tasks/1/cancel", [("Host", "rebound.example:3129"), self.cookie], body: "x")
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil)
        #expect(try self.answer(channel).0.status.code == 421)
    }

    @Test func anUnknownPageIs404AndAPageTakesNoPost() throws {
        let channel = try self.channel()
        try self.send(channel, .GET, "/nope", [self.host, self.cookie])
        #expect(try self.answer(channel).0.status == .notFound)
        let other = try self.channel()
        try self.send(other, .POST, "/", [self.host, self.cookie, ("Origin", "http://127.0.0.1:3129")])
        #expect(try self.answer(other).0.status == .methodNotAllowed)
    }
}

import AFProxyListener
import AFProxyModel
import NIOHTTP1
import Testing

@Suite struct RequestValidatorUpgradeTests {
    let validator = RequestValidator(via: "afproxy", maxHeaderBytes: 64 * 1024)

    private func handshake(
        _ uri: String, _ extra: [(String, String)] = [], version: HTTPVersion = .http1_1, method: HTTPMethod = .GET
    ) -> HTTPRequestHead {
        let fields = [("Host", "ignored"), ("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade")] + extra
        return HTTPRequestHead(version: version, method: method, uri: uri, headers: HTTPHeaders(fields))
    }

    @Test func recognisesOnlyWebSocketHandshakes() {
        #expect(RequestValidator.asksForWebSocket(self.handshake("http://h/")))
        #expect(!RequestValidator.asksForWebSocket(self.handshake("http://h/", version: .http1_0)))
        #expect(!RequestValidator.asksForWebSocket(self.handshake("http://h/", method: .POST)))
        let h2c = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: "http://h/",
            headers: ["Upgrade": "h2c", "Connection": "Upgrade, HTTP2-Settings"])
        #expect(!RequestValidator.asksForWebSocket(h2c))
        let noToken = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: "http://h/", headers: ["Upgrade": "websocket"])
        #expect(!RequestValidator.asksForWebSocket(noToken))
    }

    @Test func theTunnelGoesToTheURLsOriginWithTheHeadInOriginForm() throws {
        let request = try self.validator.validateUpgrade(
            self.handshake("http://chat.test:8080/room?id=1", [("Sec-WebSocket-Key", "k"), ("Keep-Alive", "5")]),
            client: "127.0.0.1:5"
        ).get()
        #expect(request.host == "chat.test" && request.port == 8080)
        let upgrade = try #require(request.upgrade)
        #expect(upgrade.url == "ws://chat.test:8080/room?id=1" && !upgrade.tls && upgrade.method == "GET")
        #expect(request.url == upgrade.url && request.method == "GET")
        #expect(
            upgrade.head
                == "GET /room?id=1 HTTP/1.1\r\nHost: chat.test:8080\r\nSec-WebSocket-Key: k\r\nVia: 1.1 afproxy\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
    }

    @Test func thePortDefaultsTo80AndAddressesKeepTheirBrackets() throws {
        let named = try self.validator.validateUpgrade(self.handshake("http://chat.test/"), client: "c").get()
        #expect(named.host == "chat.test" && named.port == 80)
        let v6 = try self.validator.validateUpgrade(self.handshake("http://[::1]:81/"), client: "c").get()
        #expect(v6.host == "::1" && v6.port == 81 && v6.upgrade?.url == "ws://[::1]:81/")
    }

    @Test func refusalsCloseTheConnection() {
        for head in [
            self.handshake("http://h/", [("Content-Length", "5")]),
            self.handshake("https://h/"),
            self.handshake("/relative"),
        ] {
            guard case .failure(let refusal) = self.validator.validateUpgrade(head, client: "c") else {
                Issue.record("accepted \(head.uri)")
                continue
            }
            #expect(refusal.status == .badRequest && refusal.closeConnection)
        }
    }
}

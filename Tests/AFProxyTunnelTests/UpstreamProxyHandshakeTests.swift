import AFProxyModel
import Testing

@testable import AFProxyTunnel

@Suite struct UpstreamProxyHandshakeTests {
    private let http = UpstreamProxy(scheme: .http, host: "proxy.example", port: 3128)
    private let httpAuth = UpstreamProxy(
        scheme: .http, host: "proxy.example", port: 3128, credentials: .init(user: "alice", password: "s3cret"))

    @Test func connectNamesTheTargetAndCarriesBasicCredentials() {
        let plain = UpstreamProxyHandshake(proxy: self.http, host: "example.org", port: 443)
        #expect(
            String(decoding: plain.opening(), as: UTF8.self)
                == "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n")
        let v6 = UpstreamProxyHandshake(proxy: self.httpAuth, host: "2001:db8::1", port: 8443)
        #expect(
            String(decoding: v6.opening(), as: UTF8.self)
                == "CONNECT [2001:db8::1]:8443 HTTP/1.1\r\nHost: [2001:db8::1]:8443\r\n"
                + "Proxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n\r\n")
    }

    @Test func a200InPiecesEstablishesAndKeepsWhatFollowsForTheTunnel() {
        var handshake = UpstreamProxyHandshake(proxy: self.http, host: "example.org", port: 443)
        #expect(handshake.receive(Array("HTTP/1.1 200 Connection est".utf8)) == .wait)
        #expect(handshake.receive(Array("ablished\r\nVia: x\r".utf8)) == .wait)
        #expect(handshake.receive(Array("\n\r\n\u{16}\u{03}".utf8)) == .established(leftover: [0x16, 0x03]))
        // Nothing after the end is read as the proxy's again.
        #expect(handshake.receive([1, 2, 3]) == .wait)
    }

    @Test func a407IsTheAuthFailureAndOtherAnswersAreRefusals() {
        var noCredentials = UpstreamProxyHandshake(proxy: self.http, host: "example.org", port: 443)
        guard case .failed(let auth) = noCredentials.receive(Array("HTTP/1.1 407 Proxy Auth\r\n\r\n".utf8)) else {
            Issue.record("407 not a failure")
            return
        }
        #expect(auth.code == "upstream-proxy-auth")
        #expect(auth.message.contains("none are configured"))

        var withCredentials = UpstreamProxyHandshake(proxy: self.httpAuth, host: "example.org", port: 443)
        guard case .failed(let refused) = withCredentials.receive(Array("HTTP/1.1 407 No\r\n\r\n".utf8)) else {
            Issue.record("407 not a failure")
            return
        }
        #expect(refused.code == "upstream-proxy-auth")
        #expect(!refused.message.contains("s3cret"))

        var forbidden = UpstreamProxyHandshake(proxy: self.http, host: "example.org", port: 25)
        guard case .failed(let denied) = forbidden.receive(Array("HTTP/1.1 403 Forbidden\r\n\r\n".utf8)) else {
            Issue.record("403 not a failure")
            return
        }
        #expect(denied.code == "upstream-proxy-refused")
        #expect(denied.message.contains("403 Forbidden"))

        var garbage = UpstreamProxyHandshake(proxy: self.http, host: "example.org", port: 443)
        guard case .failed(let broken) = garbage.receive(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) else {
            Issue.record("garbage not a failure")
            return
        }
        #expect(broken.code == "upstream-proxy-refused")
    }

    @Test func anEndlessHeadIsRefusedAtTheBound() {
        var handshake = UpstreamProxyHandshake(proxy: self.http, host: "example.org", port: 443)
        #expect(handshake.receive(Array("HTTP/1.1 200 OK\r\n".utf8)) == .wait)
        let field = Array("X: \(String(repeating: "a", count: 1000))\r\n".utf8)
        var result = UpstreamProxyHandshake.Action.wait
        for _ in 0..<20 where result == .wait { result = handshake.receive(field) }
        guard case .failed(let failure) = result else {
            Issue.record("an oversized head was not refused: \(result)")
            return
        }
        #expect(failure.code == "upstream-proxy-refused")
    }

    @Test func socksWithoutCredentialsSendsTheNameAndReadsTheReply() {
        let proxy = UpstreamProxy(scheme: .socks5h, host: "127.0.0.1", port: 1080)
        var handshake = UpstreamProxyHandshake(proxy: proxy, host: "example.org", port: 443)
        #expect(handshake.opening() == [5, 1, 0])
        #expect(handshake.receive([5]) == .wait)
        #expect(handshake.receive([0]) == .send([5, 1, 0, 3, 11] + Array("example.org".utf8) + [1, 187]))
        #expect(handshake.receive([5, 0, 0, 1, 10, 0]) == .wait)
        #expect(handshake.receive([0, 1, 0x04, 0x38, 0xAA]) == .established(leftover: [0xAA]))
    }

    @Test func socksUserAndPasswordThenAnAddressLiteral() {
        let proxy = UpstreamProxy(
            scheme: .socks5h, host: "127.0.0.1", port: 1080, credentials: .init(user: "u", password: "pw"))
        var handshake = UpstreamProxyHandshake(proxy: proxy, host: "192.0.2.7", port: 80)
        #expect(handshake.opening() == [5, 2, 0, 2])
        #expect(
            handshake.receive([5, 2]) == .send([1, 1, UInt8(ascii: "u"), 2, UInt8(ascii: "p"), UInt8(ascii: "w")]))
        #expect(handshake.receive([1, 0]) == .send([5, 1, 0, 1, 192, 0, 2, 7, 0, 80]))
        #expect(handshake.receive([5, 0, 0, 3, 3] + Array("abc".utf8) + [0, 80]) == .established(leftover: []))
    }

    @Test func socksRefusalsSayWhy() {
        let withCredentials = UpstreamProxy(
            scheme: .socks5h, host: "127.0.0.1", port: 1080, credentials: .init(user: "u", password: "bad"))
        var wrongPassword = UpstreamProxyHandshake(proxy: withCredentials, host: "example.org", port: 443)
        _ = wrongPassword.receive([5, 2])
        guard case .failed(let auth) = wrongPassword.receive([1, 1]) else {
            Issue.record("a refused password was not a failure")
            return
        }
        #expect(auth.code == "upstream-proxy-auth")

        let open = UpstreamProxy(scheme: .socks5h, host: "127.0.0.1", port: 1080)
        var wantsAuth = UpstreamProxyHandshake(proxy: open, host: "example.org", port: 443)
        guard case .failed(let noMethod) = wantsAuth.receive([5, 0xFF]) else {
            Issue.record("no acceptable method was not a failure")
            return
        }
        #expect(noMethod.code == "upstream-proxy-auth")

        var refused = UpstreamProxyHandshake(proxy: open, host: "example.org", port: 443)
        _ = refused.receive([5, 0])
        guard case .failed(let failure) = refused.receive([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]) else {
            Issue.record("a refused connect was not a failure")
            return
        }
        #expect(failure.code == "upstream-proxy-refused")
        #expect(failure.message.contains("connection refused"))
    }
}

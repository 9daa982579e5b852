import AFProxyModel
import NIOHTTP1
import Testing

@testable import AFProxyListener

/// CONNECT targets and the port policy: what is tunnelled, what gets 400, what gets 403.
@Suite struct ConnectTargetTests {
    @Test func parsesNamesAddressesAndBracketedIPv6() throws {
        #expect(try ConnectTarget.parse("example.org:443").get() == ConnectTarget(host: "example.org", port: 443))
        #expect(try ConnectTarget.parse("127.0.0.1:8443").get() == ConnectTarget(host: "127.0.0.1", port: 8443))
        #expect(try ConnectTarget.parse("[::1]:443").get() == ConnectTarget(host: "::1", port: 443))
        #expect(try ConnectTarget.parse("[::ffff:10.0.0.1]:1").get() == ConnectTarget(host: "::ffff:10.0.0.1", port: 1))
        #expect(try ConnectTarget.parse("under_score.test:65535").get().port == 65535)
    }

    @Test func refusesBadTargetsWith400() {
        let bad = [
            "nohost", "nohost:", ":443", "host:0", "host:70000", "host:65536", "host:44a", "host:-1",
            "host:+443", "host:0000443", "::1:443", "[::1]", "[::1]443", "[::1:443", "[zz::1]:443",
            "http://host:443", "host/path:443", "us@er:443", "a b:443", "", "host:443:443",
        ]
        for uri in bad {
            guard case .failure(let refusal) = ConnectTarget.parse(uri) else {
                Issue.record("\(uri) was accepted")
                continue
            }
            #expect(refusal.status == .badRequest, "\(uri)")
            #expect(refusal.message.contains("host:port"), "\(uri)")
        }
    }

    @Test func portPolicyIs443ByDefaultAddsPortsAndStarAllowsAny() {
        var policy = ConnectPortPolicy.default
        #expect(policy.allows(443) && !policy.allows(8443) && !policy.allows(22))
        #expect(policy.description == "443")
        let accepted = ["8443", "563", "0", "65536", "ssh", ""].map { policy.allow($0) }
        #expect(accepted == [true, true, false, false, false, false])
        #expect(policy.allows(8443) && policy.allows(443) && !policy.allows(22))
        #expect(policy.description == "443, 563, 8443")
        let star = policy.allow("*")
        #expect(star)
        #expect(policy.allows(22) && policy.allows(1))
        #expect(policy.description == "any")
    }

    @Test func validateConnectAnswers403NamingTheAllowedPorts() {
        var ports = ConnectPortPolicy.default
        _ = ports.allow("8443")
        let validator = RequestValidator(via: "afproxy", maxHeaderBytes: 64 * 1024, connectPorts: ports)
        let head = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: "mail.test:25")
        guard case .failure(let refusal) = validator.validateConnect(head, client: "c") else {
            Issue.record("port 25 was allowed")
            return
        }
        #expect(refusal.status == .forbidden)
        #expect(refusal.message.contains("443, 8443"))
        #expect(refusal.message.contains("--allow-connect-port"))
    }

    @Test func validateConnectKeepsTheTargetAndDropsCredentials() throws {
        let validator = RequestValidator(via: "afproxy", maxHeaderBytes: 64 * 1024)
        let head = HTTPRequestHead(
            version: .http1_1, method: .CONNECT, uri: "[2001:db8::1]:443",
            headers: HTTPHeaders([
                ("Host", "[2001:db8::1]:443"), ("Proxy-Authorization", "Basic eDp5"), ("User-Agent", "t"),
            ]))
        let request = try validator.validateConnect(head, client: "127.0.0.1:5").get()
        #expect(request.host == "2001:db8::1")
        #expect(request.port == 443)
        #expect(request.authority == "[2001:db8::1]:443")
        #expect(request.client == "127.0.0.1:5")
        #expect(request.headers == [.init("Host", "[2001:db8::1]:443"), .init("User-Agent", "t")])
    }

    @Test func validateConnectRefusesLoopsAndOtherVersions() {
        let validator = RequestValidator(via: "afproxy", maxHeaderBytes: 64 * 1024)
        let loop = HTTPRequestHead(
            version: .http1_1, method: .CONNECT, uri: "h.test:443", headers: HTTPHeaders([("Via", "1.1 afproxy")]))
        #expect(self.status(validator.validateConnect(loop, client: "c")) == .loopDetected)
        let http2 = HTTPRequestHead(version: HTTPVersion(major: 2, minor: 0), method: .CONNECT, uri: "h.test:443")
        #expect(self.status(validator.validateConnect(http2, client: "c")) == .httpVersionNotSupported)
    }

    @Test func aRefusalAsBytesKeepsItsBodyAndLength() {
        let refusal = ProxyRefusal(.forbidden, "no")
        let text = String(buffer: refusal.bytes(version: .http1_0, via: "afproxy"))
        #expect(text.hasPrefix("HTTP/1.0 403 Forbidden\r\n"))
        #expect(text.contains("Content-Length: 18\r\n"))
        #expect(text.hasSuffix("\r\n\r\n403 Forbidden: no\n"))
    }

    private func status(_ result: Result<StreamRequest, ProxyRefusal>) -> HTTPResponseStatus? {
        if case .failure(let refusal) = result { return refusal.status }
        return nil
    }
}

import AFProxyModel
import AFProxyRules
import AFProxyStore
import NIOHTTP1
import Testing

@testable import AFProxyListener

@Suite struct RequestValidatorAuthTests {
    /// `openssl passwd -6 -salt saltsalt secret`.
    static let hash =
        "$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1"
    /// `alice:secret` and `alice:wrong` in base64.
    static let right = "Basic YWxpY2U6c2VjcmV0"
    static let wrong = "Basic YWxpY2U6d3Jvbmc="

    let authenticator = ProxyAuthenticator(users: ProxyUsers(["alice": hash]), hashing: PasswordHash())

    private func validator() -> RequestValidator {
        RequestValidator(via: "afproxy", maxHeaderBytes: 64 * 1024, authenticator: self.authenticator)
    }

    private func head(_ method: HTTPMethod, _ uri: String, authorization: String?) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        if let authorization { headers.add(name: "Proxy-Authorization", value: authorization) }
        return HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers)
    }

    @Test func withoutOrWithUnverifiedCredentialsTheAnswerIs407WithAChallenge() throws {
        for authorization in [nil, "Bearer x", Self.wrong, Self.right] {
            guard
                case .failure(let refusal) = self.validator().validate(
                    self.head(.GET, "http://h/", authorization: authorization), client: "c")
            else {
                Issue.record("\(authorization ?? "none") was let through")
                continue
            }
            #expect(refusal.status == .proxyAuthenticationRequired)
            #expect(!refusal.closeConnection)
            let (head, _) = refusal.response(version: .http1_1, via: "afproxy")
            #expect(head.headers["proxy-authenticate"] == ["Basic realm=\"afproxy\""])
        }
        let connect = self.validator().validateConnect(self.head(.CONNECT, "h:443", authorization: nil), client: "c")
        guard case .failure(let refusal) = connect else {
            Issue.record("a CONNECT without credentials was let through")
            return
        }
        #expect(refusal.status == .proxyAuthenticationRequired && refusal.challenge)
    }

    @Test func verifiedCredentialsPassAndAreNotForwarded() throws {
        guard case .needsVerification(let credentials) = self.authenticator.verdict(header: Self.right) else {
            Issue.record("expected new credentials")
            return
        }
        #expect(self.authenticator.verify(credentials))
        let request = try self.validator().validate(
            self.head(.GET, "http://h/", authorization: Self.right), client: "c"
        ).get()
        #expect(request.headers.first("proxy-authorization") == nil)
        #expect(request.proxyUser == "alice")
        let stream = try self.validator().validateConnect(
            self.head(.CONNECT, "h:443", authorization: Self.right), client: "c"
        ).get()
        #expect(stream.headers.first("proxy-authorization") == nil)
        #expect(stream.proxyUser == "alice")
    }
}

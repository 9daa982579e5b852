import AFProxyRules
import Testing

@Suite struct ProxyCredentialsTests {
    @Test func basicCredentials() {
        // "alice:open sesame:x" in base64: the password may hold colons.
        let credentials = ProxyCredentials(header: "Basic YWxpY2U6b3BlbiBzZXNhbWU6eA==")
        #expect(credentials == ProxyCredentials(user: "alice", password: "open sesame:x"))
        #expect(ProxyCredentials(header: "basic   YWxpY2U6cHc=")?.password == "pw")
        #expect(ProxyCredentials(header: "Basic YWxpY2U6") == ProxyCredentials(user: "alice", password: ""))
    }

    @Test(arguments: ["", "Basic", "Bearer abc", "Basic !!!!", "Basic YWxpY2U=", "Basic YWxpY2U6cHc", "Digest x=y"])
    func notBasicCredentials(header: String) {
        #expect(ProxyCredentials(header: header) == nil)
    }

    @Test func base64() {
        #expect(Base64.decode("") == [])
        #expect(Base64.decode("TQ==") == Array("M".utf8))
        #expect(Base64.decode("TWE=") == Array("Ma".utf8))
        #expect(Base64.decode("TWFu") == Array("Man".utf8))
        #expect(Base64.decode("TW=u") == nil)
        #expect(Base64.decode("T===") == nil)
        #expect(Base64.decode("TWFu\n") == nil)
    }
}

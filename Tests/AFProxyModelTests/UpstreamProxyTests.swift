import AFProxyModel
import Testing

@Suite struct UpstreamProxyTests {
    @Test func readsSchemeHostPortAndCredentials() throws {
        let proxy = try UpstreamProxy(parsing: "http://alice:s3cret@proxy.example:3128")
        #expect(proxy.scheme == .http)
        #expect(proxy.host == "proxy.example")
        #expect(proxy.port == 3128)
        #expect(proxy.credentials == .init(user: "alice", password: "s3cret"))
        #expect(proxy.basicAuthorization == "Basic YWxpY2U6czNjcmV0")

        let socks = try UpstreamProxy(parsing: "socks5h://10.0.0.1:1080/")
        #expect(socks.scheme == .socks5h)
        #expect(socks.credentials == nil)
        #expect(socks.basicAuthorization == nil)
    }

    @Test func percentEncodedCredentialsAndIPv6() throws {
        let proxy = try UpstreamProxy(parsing: "http://bob%40corp:p%3Ass%40@[2001:db8::1]:8080")
        #expect(proxy.host == "2001:db8::1")
        #expect(proxy.credentials == .init(user: "bob@corp", password: "p:ss@"))
        #expect(proxy.endpoint == "[2001:db8::1]:8080")
    }

    @Test func descriptionNeverShowsTheCredentials() throws {
        let proxy = try UpstreamProxy(parsing: "http://alice:s3cret@proxy.example:3128")
        #expect(proxy.description == "http://proxy.example:3128")
        #expect(!"\(proxy)".contains("s3cret"))
        #expect(!String(reflecting: proxy.description).contains("alice"))
    }

    @Test func malformedValuesSayWhyWithoutThePassword() {
        let bad = [
            "proxy.example:3128", "https://proxy.example:3128", "socks5://p:1080", "http://proxy.example",
            "http://proxy.example:0", "http://proxy.example:99999", "http://proxy.example:3128/path",
            "http://alice@proxy.example:3128", "http://:pw@proxy.example:3128", "http://[::1:3128",
            "http://pro xy:3128", "http://:3128",
        ]
        for text in bad {
            #expect(throws: UpstreamProxyError.self, "\(text)") { try UpstreamProxy(parsing: text) }
        }
        do {
            _ = try UpstreamProxy(parsing: "http://alice:hunter2@proxy.example:3128/x")
            Issue.record("accepted a path")
        } catch {
            #expect(!error.message.contains("hunter2"))
        }
    }
}

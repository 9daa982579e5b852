import AFProxyListener
import AFProxyModel
import NIOHTTP1
import Testing

@Suite struct RequestValidatorTests {
    let validator = RequestValidator(via: "afproxy", maxHeaderBytes: 64 * 1024)

    private func head(_ method: HTTPMethod = .GET, _ uri: String, _ headers: [(String, String)] = []) -> HTTPRequestHead
    {
        HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: HTTPHeaders(headers))
    }

    private func refusal(_ head: HTTPRequestHead) -> ProxyRefusal? {
        if case .failure(let refusal) = self.validator.validate(head, client: "c") { return refusal }
        return nil
    }

    @Test func forwardsAbsoluteFormWithHostFromTheURLAndOurVia() throws {
        let result = self.validator.validate(
            self.head(
                .GET, "http://example.test:8080?q=1",
                [
                    ("Host", "wrong"), ("Connection", "X-A"), ("X-A", "1"), ("Accept", "*/*"), ("Via", "1.0 other"),
                ]),
            client: "127.0.0.1:5")
        let request = try result.get()
        #expect(request.url == "http://example.test:8080/?q=1")
        #expect(
            request.headers == [
                .init("Host", "example.test:8080"), .init("Accept", "*/*"), .init("Via", "1.0 other, 1.1 afproxy"),
            ])
        #expect(request.body == .none)
        #expect(request.kind == .data)
    }

    @Test func bodyFramingDecidesTheKind() throws {
        let sized = try self.validator.validate(self.head(.POST, "http://h/", [("Content-Length", "12")]), client: "c")
            .get()
        #expect(sized.body == .length(12))
        #expect(sized.kind == .upload)
        let chunked = try self.validator.validate(
            self.head(.PUT, "http://h/", [("Transfer-Encoding", "chunked")]), client: "c"
        ).get()
        #expect(chunked.body == .streamed)
        let empty = try self.validator.validate(self.head(.POST, "http://h/", [("Content-Length", "0")]), client: "c")
            .get()
        #expect(empty.kind == .data)
        #expect(!sized.headers.contains { $0.name.lowercased() == "content-length" })
    }

    @Test func refusesOriginFormAndOtherSchemes() {
        let origin = self.refusal(self.head(.GET, "/index.html"))
        #expect(origin?.status == .badRequest)
        #expect(origin?.message.contains("proxy") == true)
        let ftp = self.refusal(self.head(.GET, "ftp://h/file"))
        #expect(ftp?.status == .badRequest)
        #expect(ftp?.message.contains("ftp") == true)
        #expect(self.refusal(self.head(.GET, "http:///path"))?.status == .badRequest)
        #expect(self.refusal(self.head(.GET, "http://h:99999/"))?.status == .badRequest)
    }

    @Test(arguments: [
        "http://12*.0.0.1/", "http://a b/", "http://a%41.test/", "http://host,x/", "http://[::1/", "http://[zz::1]/",
        "http://[]/",
    ])
    func refusesHostsWithCharactersNoHostMayHold(_ uri: String) {
        #expect(self.refusal(self.head(.GET, uri))?.status == .badRequest)
    }

    @Test(arguments: [
        "http://127.0.0.1:8080/", "http://[::1]:80/", "http://[fe80::1%25eth0]/", "http://my_host.example-1.test/",
    ])
    func acceptsNamesAndAddresses(_ uri: String) throws {
        _ = try self.validator.validate(self.head(.GET, uri), client: "c").get()
    }

    @Test func refusesAmbiguousFramingAndClosesTheConnection() {
        let cases: [[(String, String)]] = [
            [("Content-Length", "abc")],
            [("Content-Length", "5"), ("Content-Length", "6")],
            [("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
            [("Transfer-Encoding", "gzip")],
            [("Content-Length", "-1")],
        ]
        for headers in cases {
            let refusal = self.refusal(self.head(.POST, "http://h/", headers))
            #expect(refusal?.status == .badRequest, "\(headers)")
            #expect(refusal?.closeConnection == true)
        }
    }

    @Test func refusesLoopsOversizedHeadsAndUnknownExpectations() {
        #expect(self.refusal(self.head(.GET, "http://h/", [("Via", "1.1 afproxy")]))?.status == .loopDetected)
        #expect(
            self.refusal(self.head(.GET, "http://h/", [("X-Big", String(repeating: "a", count: 70_000))]))?.status
                == .requestHeaderFieldsTooLarge)
        #expect(self.refusal(self.head(.PUT, "http://h/", [("Expect", "magic")]))?.status == .expectationFailed)
    }

    @Test func aLoopIsTheSame508ForConnectAndTheOtherMethods() throws {
        let validator = RequestValidator(via: "edge-7", maxHeaderBytes: 64 * 1024)
        let via = [("Via", "1.1 a"), ("Via", "1.0 edge-7")]
        let plain = HTTPRequestHead(version: .http1_1, method: .GET, uri: "http://h/", headers: HTTPHeaders(via))
        let connect = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: "h:443", headers: HTTPHeaders(via))
        guard case .failure(let refusal) = validator.validate(plain, client: "c"),
            case .failure(let connectRefusal) = validator.validateConnect(connect, client: "c")
        else {
            Issue.record("a request naming this proxy in Via was let through")
            return
        }
        #expect(refusal.status == .loopDetected)
        #expect(refusal.message == "the request already passed through this proxy (Via: 1.1 a, 1.0 edge-7)")
        #expect(connectRefusal == refusal)
        // Another proxy's name is no loop, and its Via is kept in front of ours.
        let other = HTTPRequestHead(version: .http1_1, method: .GET, uri: "http://h/", headers: ["Via": "1.1 afproxy"])
        #expect(try validator.validate(other, client: "c").get().headers.first("via") == "1.1 afproxy, 1.1 edge-7")
    }

    @Test func stripsUserinfoAndFragment() throws {
        let request = try self.validator.validate(self.head(.GET, "http://user:pw@h.test/p#frag"), client: "c").get()
        #expect(request.url == "http://h.test/p")
        #expect(request.headers.first("host") == "h.test")
    }
}

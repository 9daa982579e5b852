import AFProxyModel
import CCurl
import Testing

@testable import AFProxyCurl

@Suite struct ResponseHeadParserTests {
    private func feed(_ parser: inout ResponseHeadParser, _ line: String) -> ResponseHeadParser.Event? {
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBytes { parser.feed(UnsafeRawBufferPointer($0)) }
    }

    private func parse(_ lines: [String]) -> [ResponseHeadParser.Event] {
        var parser = ResponseHeadParser()
        return lines.compactMap { self.feed(&parser, $0) }
    }

    @Test func reportsInterimHeadsAndFoldsContinuationLines() {
        var parser = ResponseHeadParser()
        #expect(self.feed(&parser, "HTTP/1.1 103 Early Hints\r\n") == nil)
        #expect(self.feed(&parser, "Link: </a.css>\r\n") == nil)
        #expect(
            self.feed(&parser, "\r\n")
                == .interim(
                    ProxyResponseHead(
                        status: 103, reason: "Early Hints", version: "1.1", headers: [.init("Link", "</a.css>")])))
        #expect(self.feed(&parser, "HTTP/1.1 201 funky chunky!\r\n") == nil)
        #expect(self.feed(&parser, "Content-Length: 5\r\n") == nil)
        #expect(self.feed(&parser, "X-Long: a\r\n") == nil)
        #expect(self.feed(&parser, "\tb\r\n") == nil)
        let head = ProxyResponseHead(
            status: 201, reason: "funky chunky!", version: "1.1",
            headers: [.init("Content-Length", "5"), .init("X-Long", "a b")])
        #expect(self.feed(&parser, "\r\n") == .final(head))
        #expect(head.contentLength == 5)
        // Lines after the head are the trailer section, not a second head.
        #expect(self.feed(&parser, "X-Sum: 1\r\n") == nil)
        #expect(self.feed(&parser, "\r\n") == nil)
        #expect(parser.trailers == [.init("X-Sum", "1")])
    }

    @Test(arguments: [
        "X-Bad : v\r\n",  // whitespace before the colon
        "X-Bad: a\rb\r\n",  // bare CR
        "X-Bad: a\u{0}b\r\n",  // NUL
        "X-Bad: a\u{1}b\r\n",  // another control byte
        "NoColon\r\n",
        ": empty name\r\n",
        "Bad(Name): v\r\n",
    ])
    func refusesInvalidFieldLines(_ line: String) {
        let events = self.parse(["HTTP/1.1 200 OK\r\n", line, "Content-Length: 2\r\n", "\r\n"])
        #expect(events.count == 1)
        guard case .invalid = events.first else {
            Issue.record("expected invalid, got \(events)")
            return
        }
    }

    @Test func aFollowedRedirectIsAStepNotTheFinalHead() {
        var parser = ResponseHeadParser()
        parser.followsRedirects = true
        for line in ["HTTP/1.1 302 Found\r\n", "Location: /b\r\n", "Content-Length: 0\r\n", "\r\n"] {
            #expect(self.feed(&parser, line) == nil)
        }
        #expect(self.feed(&parser, "HTTP/1.1 200 OK\r\n") == nil)
        #expect(self.feed(&parser, "Content-Length: 2\r\n") == nil)
        let final = ProxyResponseHead(
            status: 200, reason: "OK", version: "1.1", headers: [HTTPHeaderField("Content-Length", "2")])
        #expect(self.feed(&parser, "\r\n") == .final(final))
        // Without following, the 302 is the answer; a 304 or a 3xx without Location always is.
        #expect(self.parse(["HTTP/1.1 302 Found\r\n", "Location: /b\r\n", "\r\n"]).count == 1)
        var following = ResponseHeadParser()
        following.followsRedirects = true
        _ = self.feed(&following, "HTTP/1.1 304 Not Modified\r\n")
        _ = self.feed(&following, "Location: /b\r\n")
        #expect(self.feed(&following, "\r\n") != nil)
    }

    @Test func refusesAFoldedFirstLineAndAnUnaskedSwitch() {
        #expect(
            self.parse(["HTTP/1.1 200 OK\r\n", " Date: x\r\n"]) == [
                .invalid("the response head starts with a folded line")
            ])
        #expect(
            self.parse(["HTTP/1.1 101 Switching Protocols\r\n", "\r\n"]) == [
                .invalid("upstream switched protocols (101) unasked")
            ])
        #expect(self.parse(["HTTP/1.1 20 OK\r\n"]) == [.invalid("the status line has no three-digit status code")])
        // Found by scripts/fuzz: 60 digits overflowed the status and trapped.
        #expect(
            self.parse(["HTTP/1.1 200" + String(repeating: "1", count: 60) + " OK\r\n"])
                == [.invalid("the status line has no three-digit status code")])
    }

    /// Found by scripts/fuzz: bytes after the version's digits became part of the version,
    /// which reaches the client in Via.
    @Test func refusesAnythingButDigitDotDigitAsTheVersion() {
        for line in ["HTTP/1.1\u{BE}\t 200 OK\r\n", "HTTP/1.10 200 OK\r\n", "HTTP/1 200 OK\r\n", "HTTP/1.1\r\n"] {
            #expect(self.parse([line, "\r\n"]) == [.invalid("the status line has no valid HTTP version")], "\(line)")
        }
        #expect(
            self.parse(["HTTP/1.0 200 OK\r\n", "\r\n"]) == [
                .final(ProxyResponseHead(status: 200, reason: "OK", version: "1.0", headers: []))
            ])
    }

    /// curl writes an HTTP/2 head as `HTTP/2 200 ` with no reason phrase; trailer fields follow
    /// the body as lines of their own.
    @Test func readsAnHTTP2HeadAndItsTrailers() {
        var parser = ResponseHeadParser()
        #expect(self.feed(&parser, "HTTP/2 200 \r\n") == nil)
        #expect(self.feed(&parser, "content-length: 5\r\n") == nil)
        #expect(
            self.feed(&parser, "\r\n")
                == .final(
                    ProxyResponseHead(status: 200, reason: "", version: "2", headers: [.init("content-length", "5")])))
        #expect(!parser.retiresConnection)
        #expect(self.feed(&parser, "x-sum: 1\r\n") == nil)
        #expect(parser.trailers == [.init("x-sum", "1")])
        #expect(
            self.parse(["HTTP/2 100 \r\n", "\r\n"]) == [
                .interim(ProxyResponseHead(status: 100, reason: "", version: "2", headers: []))
            ])
        for line in ["HTTP/2\r\n", "HTTP/4 200\r\n", "HTTP/2x200\r\n"] {
            #expect(self.parse([line, "\r\n"]) == [.invalid("the status line has no valid HTTP version")], "\(line)")
        }
    }

    private func retires(_ lines: [String]) -> Bool {
        var parser = ResponseHeadParser()
        for line in lines { _ = self.feed(&parser, line) }
        return parser.retiresConnection
    }

    @Test func aStrictHeadKeepsItsConnection() {
        #expect(!self.retires(["HTTP/1.1 200 OK\r\n", "Content-Length: 2\r\n", "\r\n"]))
        #expect(
            !self.retires(["HTTP/1.1 200 OK\r\n", "Transfer-Encoding: gzip, chunked\r\n", "\r\n", "X-T: 1\r\n", "\r\n"])
        )
        #expect(!self.retires(["HTTP/1.1 103 Early Hints\r\n", "\r\n", "HTTP/1.1 204 No Content\r\n", "\r\n"]))
    }

    /// Found by the fuzzer: `Content-Length: 0` folded onto a blank line reached the client as `0 `.
    @Test func aBlankFoldAddsNothingAndAFoldOntoAnEmptyValueNoSpace() {
        let events = self.parse([
            "HTTP/1.1 200 OK\r\n", "Content-Length: 0\r\n", " \r\n", "X-Empty:\r\n", "\tfolded\r\n",
            "X-Blank: a\r\n", "\t \r\n", "\r\n",
        ])
        #expect(
            events == [
                .final(
                    ProxyResponseHead(
                        status: 200, reason: "OK", version: "1.1",
                        headers: [.init("Content-Length", "0"), .init("X-Empty", "folded"), .init("X-Blank", "a")]))
            ])
    }

    @Test(arguments: [
        ["HTTP/1.1 200 OK\n", "Content-Length: 2\n", "\n"],  // bare LF
        ["HTTP/1.1 200 OK\r\n", "Content-Length: 2\n", "\r\n"],  // one bare LF is enough
        ["HTTP/1.1 200 OK\r\n", "X-A: a\r\n", " b\r\n", "Content-Length: 2\r\n", "\r\n"],  // folded
        ["HTTP/1.1 200 OK\r\n", "Content-Length: 2\r\n", "Content-Length: 2\r\n", "\r\n"],  // merged
        ["HTTP/1.1 200 OK\r\n", "Content-Length: 2\r\n", "Transfer-Encoding: chunked\r\n", "\r\n"],
        ["HTTP/1.1 200 OK\r\n", "Transfer-Encoding: chunked, chunked\r\n", "\r\n"],
        ["HTTP/1.0 200 OK\r\n", "Transfer-Encoding: chunked\r\n", "\r\n"],
        ["HTTP/1.1 100 Continue\n", "\n", "HTTP/1.1 200 OK\r\n", "Content-Length: 2\r\n", "\r\n"],  // interim
        ["HTTP/1.1 200 OK\r\n", "Transfer-Encoding: chunked\r\n", "\r\n", "X-T: 1\n", "\r\n"],  // trailer
    ])
    func aHeadThatNeededLeniencyRetiresItsConnection(_ lines: [String]) {
        #expect(self.retires(lines))
    }
}

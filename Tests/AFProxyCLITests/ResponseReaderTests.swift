import Testing

@testable import AFProxyCLI

#if canImport(Glibc)
import Glibc
#endif

/// The framing of the control socket's answers as afproxyctl reads them, fed from canned pieces
/// instead of a socket: how the bytes are cut into reads must never change what is read.
@Suite struct ResponseReaderTests {
    /// A reader that receives `pieces` one a call, then the end of the stream.
    private func reader(_ pieces: [String]) -> ResponseReader {
        var remaining = pieces.map { Array($0.utf8) }[...]
        return ResponseReader { remaining.popFirst() ?? [] }
    }

    /// The status and the whole body, and the pieces the body was handed over in.
    private func read(
        _ pieces: [String], closeEndsChunks: Bool = false
    ) throws(ControlClient.Failure) -> (status: Int, body: String, sinks: Int) {
        var reader = self.reader(pieces)
        let head = try reader.readHead()
        var body: [UInt8] = []
        var sinks = 0
        try reader.readBody(head, closeEndsChunks: closeEndsChunks) { bytes in
            body.append(contentsOf: bytes)
            sinks += 1
        }
        return (head.status, String(decoding: body, as: UTF8.self), sinks)
    }

    /// Every way of cutting `response` in two, and one byte a read.
    private func cuts(_ response: String) -> [[String]] {
        let bytes = Array(response.utf8)
        var cuts = (1..<bytes.count).map { index in
            [String(decoding: bytes[..<index], as: UTF8.self), String(decoding: bytes[index...], as: UTF8.self)]
        }
        cuts.append(bytes.map { String(decoding: [$0], as: UTF8.self) })
        return cuts
    }

    private func failure(_ pieces: [String], closeEndsChunks: Bool = false) -> ControlClient.Failure? {
        do {
            _ = try self.read(pieces, closeEndsChunks: closeEndsChunks)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Content-Length

    @Test func aContentLengthBodyIsReadExactlyAndWhatFollowsIsIgnored() throws {
        let response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"tasks\":[]}"
        let result = try self.read([response])
        #expect(result.status == 200)
        #expect(result.body == "{\"tasks\":[]")  // 11 bytes: the 12th is past the length
    }

    @Test func theHeaderNamesAndSpacingDoNotMatter() throws {
        let result = try self.read(["HTTP/1.1 404 Not Found\r\ncontent-LENGTH:\t 5 \r\n\r\nnope\n"])
        #expect(result.status == 404)
        #expect(result.body == "nope\n")
    }

    @Test func aContentLengthBodyCutAnywhereReadsTheSame() throws {
        let response =
            "HTTP/1.1 409 Conflict\r\nContent-Length: 26\r\nConnection: close\r\n\r\n{\"error\":\"task 7: state\"}\n"
        for pieces in self.cuts(response) {
            let result = try self.read(pieces)
            #expect(result.status == 409, "cut as \(pieces.map(\.utf8.count))")
            #expect(result.body == "{\"error\":\"task 7: state\"}\n", "cut as \(pieces.map(\.utf8.count))")
        }
    }

    @Test func anEmptyBody() throws {
        let result = try self.read(["HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"])
        #expect(result.status == 204)
        #expect(result.body == "")
    }

    @Test func aContentLengthBodyCutShortIsAnErrorNotAShorterBody() {
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"
        let body = "{\"tasks\":[]}"
        for length in 0..<body.utf8.count {
            let cut = head + String(body.prefix(length))
            #expect(self.failure([cut]) == ResponseReader.truncated, "cut after \(length) bytes of the body")
        }
    }

    // MARK: chunked

    @Test func chunksAreJoinedInOrder() throws {
        let response =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\n\r\n"
        let result = try self.read([response])
        #expect(result.status == 200)
        #expect(result.body == "hello 0123456789")
        #expect(result.sinks == 3)
    }

    @Test func chunkedWinsOverContentLength() throws {
        let response =
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"
            + "4\r\nabcd\r\n0\r\n\r\n"
        #expect(try self.read([response]).body == "abcd")
    }

    @Test func chunkExtensionsAndSpacesAroundTheSizeAreIgnored() throws {
        let response =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "3;name=value\r\nabc\r\n2 ; x\r\nde\r\n0;last\r\n\r\n"
        #expect(try self.read([response]).body == "abcde")
    }

    @Test func uppercaseHexSizes() throws {
        let chunk = String(repeating: "z", count: 0x1F)
        let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1F\r\n\(chunk)\r\n0\r\n\r\n"
        #expect(try self.read([response]).body == chunk)
    }

    @Test func trailersAreNotPartOfTheBody() throws {
        let response =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "2\r\nok\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n"
        #expect(try self.read([response]).body == "ok")
    }

    @Test func aChunkedBodyCutAnywhereReadsTheSame() throws {
        let response =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "4;a=b\r\n{\"a\"\r\n3\r\n:1}\r\n1\r\n\n\r\n0\r\nX-T: y\r\n\r\n"
        for pieces in self.cuts(response) {
            let result = try self.read(pieces)
            #expect(result.status == 200, "cut as \(pieces.map(\.utf8.count))")
            #expect(result.body == "{\"a\":1}\n", "cut as \(pieces.map(\.utf8.count))")
        }
    }

    @Test func aChunkedBodyCutBeforeItsLastChunkIsAnError() throws {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let body = Array("4;x=y\r\nabcd\r\n3\r\nefg\r\n0\r\n\r\n".utf8)
        let lastChunkLine = body.count - 2  // "0\r\n" read: the end, whatever follows
        for length in 0..<lastChunkLine {
            let cut = head + String(decoding: body[..<length], as: UTF8.self)
            #expect(self.failure([cut]) == ResponseReader.truncated, "cut after \(length) bytes of the body")
        }
        #expect(try self.read([head + String(decoding: body[..<lastChunkLine], as: UTF8.self)]).body == "abcdefg")
    }

    /// The event stream ends when the daemon closes it, which it does between two events.
    @Test func whereTheCloseEndsTheStreamOnlyACutInsideAChunkIsAnError() throws {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let chunks = "6\r\none 1\n\r\n6\r\ntwo 2\n\r\n"
        let result = try self.read([head, chunks], closeEndsChunks: true)
        #expect(result.body == "one 1\ntwo 2\n")
        #expect(result.sinks == 2)
        #expect(try self.read([head], closeEndsChunks: true).body == "")
        for cut in ["6", "6\r", "6\r\n", "6\r\ntwo", "6\r\ntwo 2\n", "6\r\ntwo 2\n\r"] {
            #expect(
                self.failure([head, "6\r\none 1\n\r\n", cut], closeEndsChunks: true) == ResponseReader.truncated,
                "cut: \(cut)")
        }
        // Without the option the same close is a truncation.
        #expect(self.failure([head, chunks]) == ResponseReader.truncated)
    }

    /// `watch` prints each event as it comes: a chunk is handed over as soon as it is whole,
    /// before the reader waits for the next one.
    @Test func aWholeChunkIsHandedOverBeforeTheNextIsAwaited() throws {
        let pieces = [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\none\n\r\n",
            "4\r\ntwo\n\r\n",
            "0\r\n\r\n",
        ].map { Array($0.utf8) }
        var handed: [String] = []
        var handedWhenAsked: [[String]] = []
        var index = 0
        var reader = ResponseReader {
            handedWhenAsked.append(handed)
            defer { index += 1 }
            return index < pieces.count ? pieces[index] : []
        }
        let head = try reader.readHead()
        try reader.readBody(head) { handed.append(String(decoding: $0, as: UTF8.self)) }
        #expect(handed == ["one\n", "two\n"])
        #expect(handedWhenAsked == [[], ["one\n"], ["one\n", "two\n"]])
    }

    // MARK: close-delimited

    @Test func withoutFramingTheBodyRunsToTheClose() throws {
        let result = try self.read(["HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst ", "second", " third"])
        #expect(result.status == 200)
        #expect(result.body == "first second third")
    }

    // MARK: the head

    @Test func aStatusLineWithoutReasonPhraseIsAccepted() throws {
        #expect(try self.read(["HTTP/1.0 503\r\nContent-Length: 2\r\n\r\nno"]).status == 503)
    }

    @Test func aHeadCutAnywhereReadsTheSame() throws {
        let response = "HTTP/1.1 201 Created\r\nX-A: 1\r\nContent-Length: 1\r\n\r\n!"
        for pieces in self.cuts(response) {
            let result = try self.read(pieces)
            #expect(result.status == 201, "cut as \(pieces.map(\.utf8.count))")
            #expect(result.body == "!", "cut as \(pieces.map(\.utf8.count))")
        }
    }

    @Test func notHTTPIsAProtocolError() {
        #expect(
            self.failure(["SSH-2.0-OpenSSH_9.6\r\n\r\n"]) == .protocolError("not an HTTP response: SSH-2.0-OpenSSH_9.6")
        )
        #expect(self.failure(["HTTP/1.1 OK 200\r\n\r\n"]) == .protocolError("not an HTTP response: HTTP/1.1 OK 200"))
        #expect(
            self.failure(["HTTP/1.1\r\nContent-Length: 0\r\n\r\n"])
                == .protocolError("not an HTTP response: HTTP/1.1\r\nContent-Length: 0"))
        #expect(self.failure(["HTTP/2 200 OK\r\n\r\n"]) == .protocolError("not an HTTP response: HTTP/2 200 OK"))
    }

    @Test func aStatusCodeIsThreeDigitsAndTheVersionHTTP1() {
        for line in [
            "HTTP/1.1 2000 OK", "HTTP/1.1 20 OK", "HTTP/1.1 +20 OK", "HTTP/1.1 -200 OK", "HTTP/10 200 OK",
            "HTTP/1.1 2a0 OK",
        ] {
            #expect(
                self.failure([line + "\r\nContent-Length: 0\r\n\r\n"])
                    == .protocolError("not an HTTP response: \(line)\r\nContent-Length: 0"))
        }
    }

    /// A sign or an overflow trapped afproxyctl (a negative prefix, `size + 2`) instead of
    /// reporting a daemon that answers badly.
    @Test func aContentLengthOfAnythingButDigitsIsAProtocolError() {
        for value in ["-1", "+5", "5 5", "abc", "1234567890123456789"] {
            #expect(
                self.failure(["HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\nabcde"])
                    == .protocolError("bad Content-Length: \(value)"))
        }
    }

    @Test func aChunkSizeOfAnythingButHexDigitsIsAProtocolError() {
        for size in ["-1", "-2", "+5", "0x5", "7fffffffffffffff", ""] {
            let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabcde\r\n0\r\n\r\n"
            #expect(self.failure([response]) == .protocolError("bad chunk size"), "size \(size)")
        }
    }

    @Test func aChunkLongerThanItsSizeIsAProtocolError() {
        let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n"
        #expect(self.failure([response]) == .protocolError("a chunk not followed by CRLF"))
    }

    @Test func anEmptyHeadIsAProtocolError() {
        #expect(self.failure(["\r\n\r\n"]) == .protocolError("empty response"))
    }

    @Test func aCloseBeforeTheHeadEndsIsAProtocolError() {
        let closed = ControlClient.Failure.protocolError("the daemon closed the connection before answering")
        #expect(self.failure([]) == closed)
        #expect(self.failure(["HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"]) == closed)
    }

    @Test func aBadChunkSizeIsAProtocolError() {
        let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n"
        #expect(self.failure([response]) == .protocolError("bad chunk size"))
    }

    @Test func aReadErrorIsPassedOn() {
        var reader = ResponseReader { () throws(ControlClient.Failure) -> [UInt8] in
            throw .protocolError("cannot read from the daemon: Connection reset by peer")
        }
        #expect(throws: ControlClient.Failure.protocolError("cannot read from the daemon: Connection reset by peer")) {
            try reader.readHead()
        }
    }
}

/// A signal that interrupts a read of the daemon's answer (EINTR) is no answer at all.
@Suite struct InterruptedReadTests {
    let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}".utf8)

    /// `recv` that fails with EINTR `interruptions` times, then hands over the response.
    private func reader(interruptions: Int, interrupted: @escaping () -> Bool) -> ResponseReader {
        var left = interruptions
        var sent = false
        return ResponseReader(fd: -1, interrupted: interrupted) { _, buffer in
            if left > 0 {
                left -= 1
                errno = EINTR
                return -1
            }
            guard !sent else { return 0 }
            sent = true
            buffer.copyBytes(from: self.response)
            return self.response.count
        }
    }

    @Test func anInterruptedReadIsReadAgain() throws {
        var reader = self.reader(interruptions: 3, interrupted: { false })
        let head = try reader.readHead()
        var body: [UInt8] = []
        try reader.readBody(head) { body.append(contentsOf: $0) }
        #expect(head.status == 200 && body == Array("{}".utf8))
    }

    @Test func anInterruptionMeantToStopTheWaitEndsIt() {
        var reader = self.reader(interruptions: 1, interrupted: { true })
        #expect(throws: ControlClient.Failure.self) { try reader.readHead() }
    }
}

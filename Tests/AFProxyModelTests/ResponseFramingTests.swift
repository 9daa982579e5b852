import AFProxyModel
import Testing

@Suite struct ResponseFramingTests {
    private func head(_ fields: [(String, String)]) -> ProxyResponseHead {
        ProxyResponseHead(
            status: 200, reason: "OK", version: "1.1", headers: fields.map { HTTPHeaderField($0.0, $0.1) })
    }

    private func error(_ fields: [(String, String)]) -> String? {
        if case .failure(let error) = ResponseFraming.normalize(self.head(fields)) { return error.message }
        return nil
    }

    @Test func refusesInvalidAndConflictingLengths() {
        #expect(
            self.error([("Content-Length", "5"), ("Content-Length", "10")])
                == "conflicting Content-Length values 5 and 10")
        #expect(self.error([("Content-Length", "5, 10")]) == "conflicting Content-Length values 5 and 10")
        #expect(self.error([("Content-Length", "+5")]) == "invalid Content-Length: +5")
        #expect(self.error([("Content-Length", "-1")]) == "invalid Content-Length: -1")
        #expect(self.error([("Content-Length", "")]) == "invalid Content-Length: ")
        #expect(self.error([("Content-Length", "0x10")]) == "invalid Content-Length: 0x10")
        #expect(self.error([("Content-Length", "99999999999999999999")]) != nil)
    }

    @Test func refusesChunkedBeforeAnotherCodingAndALengthBesideACloseDelimitedBody() {
        #expect(self.error([("Transfer-Encoding", "chunked, gzip")]) == "Transfer-Encoding applies gzip after chunked")
        #expect(self.error([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "gzip")]) != nil)
        #expect(
            self.error([("Transfer-Encoding", "gzip"), ("Content-Length", "3")])
                == "Content-Length beside a Transfer-Encoding that does not end in chunked")
    }

    @Test func chunkedAppliedTwiceIsOneChunkedCoding() throws {
        let normalized = try ResponseFraming.normalize(
            self.head([("X-A", "1"), ("Transfer-Encoding", "chunked, Chunked"), ("X-B", "2")])
        ).get()
        #expect(
            normalized.headers == [
                HTTPHeaderField("X-A", "1"), HTTPHeaderField("Transfer-Encoding", "chunked"),
                HTTPHeaderField("X-B", "2"),
            ])
        let split = try ResponseFraming.normalize(
            self.head([
                ("Transfer-Encoding", "gzip"), ("Content-Length", "3"), ("Transfer-Encoding", "chunked"),
                ("transfer-encoding", "chunked"),
            ])
        ).get()
        #expect(split.headers == [HTTPHeaderField("Transfer-Encoding", "gzip, chunked")])
        #expect(split.transferCodings == ["gzip", "chunked"])
        #expect(
            self.error([("Transfer-Encoding", "chunked, gzip, chunked")])
                == "Transfer-Encoding applies gzip after chunked")
    }

    @Test func transferEncodingOverridesContentLength() throws {
        let normalized = try ResponseFraming.normalize(
            self.head([("Content-Length", "5"), ("Transfer-Encoding", "chunked")])
        ).get()
        #expect(normalized.headers == [HTTPHeaderField("Transfer-Encoding", "chunked")])
        #expect(normalized.contentLength == nil)
        #expect(normalized.transferCodings == ["chunked"])
    }

    @Test func identicalLengthsMergeIntoOneField() throws {
        let normalized = try ResponseFraming.normalize(
            self.head([("Content-Length", "5"), ("X-A", "1"), ("content-length", "5, 5")])
        ).get()
        #expect(normalized.headers == [HTTPHeaderField("Content-Length", "5"), HTTPHeaderField("X-A", "1")])
        #expect(normalized.contentLength == 5)
    }

    @Test func validHeadsPassUnchanged() throws {
        for fields in [
            [("Content-Length", "10")], [("Transfer-Encoding", "gzip, chunked")], [("Transfer-Encoding", "gzip")], [],
        ] {
            let head = self.head(fields)
            #expect(try ResponseFraming.normalize(head).get() == head)
        }
    }

    @Test func formatsHTTPDates() {
        #expect(HTTPDate.format(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(secondsSince1970: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}

import AFProxyManager
import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct TransparentResumeTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let broken = TaskFailure.upstreamBroken("cut")

    func head(_ status: Int, _ fields: [(String, String)]) -> ProxyResponseHead {
        ProxyResponseHead(
            status: status, reason: "", version: "1.1", headers: fields.map { HTTPHeaderField($0.0, $0.1) })
    }

    var resumable: ProxyResponseHead {
        self.head(200, [("Content-Length", "100"), ("Accept-Ranges", "bytes"), ("ETag", #""a""#)])
    }

    func started(_ first: ProxyResponseHead? = nil, received: Int = 40, limit: Int = 3) -> TransparentResume {
        var resume = TransparentResume(method: "GET", headers: [], limit: limit)!
        resume.firstHead(first ?? self.resumable, now: self.now)
        resume.bodyReceived(received)
        return resume
    }

    @Test func aBrokenResumableResponseAsksForTheRestAndTakesTheMatching206() {
        var resume = self.started()
        let request = resume.next(after: self.broken)
        #expect(request == .init(offset: 40, ifRange: #""a""#))
        let rest = self.head(206, [("Content-Range", "bytes 40-99/100"), ("ETag", #""a""#)])
        let accepted = resume.continuation(rest, now: self.now)
        #expect(accepted)
        #expect(resume.resumes == [TaskResume(offset: 40, at: self.now)])
    }

    @Test func onlyAPlainGetIsEverContinued() {
        #expect(TransparentResume(method: "POST", headers: [], limit: 3) == nil)
        #expect(TransparentResume(method: "GET", headers: [HTTPHeaderField("Range", "bytes=0-")], limit: 3) == nil)
        #expect(TransparentResume(method: "GET", headers: [], limit: 0) == nil)
    }

    @Test func aResponseWithoutRangesLengthOrStrongValidatorIsNotContinued() {
        let unsafe: [[(String, String)]] = [
            [("Content-Length", "100"), ("ETag", #""a""#)],  // no Accept-Ranges
            [("Accept-Ranges", "bytes"), ("ETag", #""a""#)],  // no length
            [("Content-Length", "100"), ("Accept-Ranges", "bytes"), ("ETag", #"W/"a""#)],  // weak
            [("Content-Length", "100"), ("Accept-Ranges", "bytes")],  // no validator
            [
                ("Content-Length", "100"), ("Accept-Ranges", "bytes"),
                ("Last-Modified", HTTPDate.format(secondsSince1970: 1_800_000_000 - 30)),
            ],  // modified 30 s before
        ]
        for fields in unsafe {
            var resume = self.started(self.head(200, fields))
            let request = resume.next(after: self.broken)
            #expect(request == nil, "\(fields)")
        }
        var old = self.started(
            self.head(
                200,
                [
                    ("Content-Length", "100"), ("Accept-Ranges", "bytes"),
                    ("Last-Modified", HTTPDate.format(secondsSince1970: 1_800_000_000 - 3600)),
                ]))
        let request = old.next(after: self.broken)
        #expect(request != nil)
    }

    /// `Accept-Ranges` is read in any case, wherever `bytes` stands in it, and in any of the fields.
    @Test func acceptRangesMentionsBytesInAnyCaseAndField() {
        for value in ["bytes", "Bytes", "BYTES", "none, bytes", "x-bytes-y"] {
            var resume = self.started(
                self.head(200, [("Content-Length", "100"), ("accept-ranges", value), ("ETag", #""a""#)]))
            #expect(resume.next(after: self.broken) != nil, "\(value)")
        }
        var second = self.started(
            self.head(
                200,
                [
                    ("Content-Length", "100"), ("Accept-Ranges", "none"), ("Accept-Ranges", "bytes"),
                    ("ETag", #""a""#),
                ]))
        #expect(second.next(after: self.broken) != nil)
        for value in ["none", "byte", "", "bytés", "b ytes"] {
            var resume = self.started(
                self.head(200, [("Content-Length", "100"), ("Accept-Ranges", value), ("ETag", #""a""#)]))
            #expect(resume.next(after: self.broken) == nil, "\(value)")
        }
    }

    @Test func anAnswerThatIsNotTheRestEndsTheResumes() {
        for answer in [
            self.head(200, [("Content-Length", "100"), ("ETag", #""b""#)]),
            self.head(206, [("Content-Range", "bytes 0-99/100"), ("ETag", #""a""#)]),
            self.head(206, [("Content-Range", "bytes 40-119/120"), ("ETag", #""a""#)]),
            self.head(206, [("Content-Range", "bytes 40-99/100"), ("ETag", #""b""#)]),
        ] {
            var resume = self.started()
            _ = resume.next(after: self.broken)
            let accepted = resume.continuation(answer, now: self.now)
            #expect(!accepted)
            resume.bodyReceived(1)
            let again = resume.next(after: self.broken)
            #expect(again == nil)
        }
    }

    @Test func resumesStopAtTheLimitAndNeverForACancel() {
        var resume = self.started(limit: 1)
        let canceled = resume.next(after: .canceled())
        let gone = resume.next(after: .clientClosed("gone"))
        #expect(canceled == nil && gone == nil)
        _ = resume.next(after: self.broken)
        _ = resume.continuation(self.head(206, [("Content-Range", "bytes 40-99/100")]), now: self.now)
        resume.bodyReceived(10)
        let over = resume.next(after: self.broken)
        #expect(over == nil)
    }

    @Test func nothingOrEverythingReceivedIsNotContinued() {
        var none = self.started(received: 0)
        var all = self.started(received: 100)
        let (first, second) = (none.next(after: self.broken), all.next(after: self.broken))
        #expect(first == nil && second == nil)
    }
}

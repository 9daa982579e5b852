import AFProxyManager
import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct DownloadStateMachineTests {
    typealias Machine = DownloadStateMachine
    let now = ContinuousClock.now
    let date = Date(timeIntervalSince1970: 1_800_000_000)
    static let etag = #""v1""#

    func head(_ status: Int, _ headers: [(String, String)] = []) -> ProxyResponseHead {
        ProxyResponseHead(
            status: status, reason: status == 200 ? "OK" : "", version: "1.1",
            headers: headers.map { HTTPHeaderField($0.0, $0.1) })
    }

    func full(_ length: Int64, etag: String? = Self.etag) -> ProxyResponseHead {
        var fields = [("Content-Length", "\(length)")]
        if let etag { fields.append(("ETag", etag)) }
        return self.head(200, fields)
    }

    func partial(from first: Int64, total: Int64, etag: String = Self.etag) -> ProxyResponseHead {
        self.head(
            206,
            [
                ("Content-Range", "bytes \(first)-\(total - 1)/\(total)"), ("Content-Length", "\(total - first)"),
                ("ETag", etag),
            ])
    }

    /// A machine with an attempt running from 0 whose 200 head was accepted.
    func receiving(total: Int64 = 100, maxAttempts: Int = 10) -> Machine {
        var machine = Machine(policy: .init(maxAttempts: maxAttempts))
        _ = machine.start()
        _ = machine.slotGranted()
        _ = machine.headReceived(self.full(total), now: self.date)
        return machine
    }

    @Test func aNewDownloadQueuesThenStartsFromZeroAndFinishesWhenTheLengthIsRight() {
        var machine = Machine(policy: .init())
        #expect(machine.start() == [.enqueue])
        #expect(machine.waiting(now: self.now) == "queued")
        #expect(machine.slotGranted() == [.startTransfer(range: nil)])
        #expect(machine.waiting(now: self.now) == nil)
        #expect(machine.headReceived(self.full(100), now: self.date) == [.persist])
        #expect(machine.isAccepting)
        #expect(machine.total == 100)
        #expect(machine.validator == .entityTag(Self.etag))
        machine.bodyWritten(100)
        #expect(machine.transferEnded(nil, now: self.now) == [.finalize])
        #expect(machine.finalized(nil) == [.releaseSlot, .finish(nil, removePartial: false), .persist])
        #expect(machine.state == .completed && machine.endFailure == nil)
        #expect(machine.resumes.isEmpty)
    }

    @Test func aBrokenTransferThatMovedBytesResumesAtOnceWithRangeAndIfRange() {
        var machine = self.receiving()
        machine.bodyWritten(40)
        let broken = TaskFailure.upstreamBroken("closed")
        #expect(
            machine.transferEnded(broken, now: self.now) == [
                .startTransfer(range: .init(offset: 40, ifRange: Self.etag))
            ])
        #expect(
            machine.headReceived(self.partial(from: 40, total: 100), now: self.date) == [
                .publishResumedAtOffset, .persist,
            ])
        #expect(machine.resumes == [TaskResume(offset: 40, at: self.date)])
        machine.bodyWritten(60)
        #expect(machine.transferEnded(nil, now: self.now) == [.finalize])
        #expect(machine.offset == 100)
    }

    @Test func attemptsThatMoveNothingBackOffDoublingAndFailAfterTheLimit() {
        var machine = self.receiving(maxAttempts: 3)
        let refused = TaskFailure.connectionRefused("refused")
        machine.bodyWritten(10)
        _ = machine.transferEnded(.upstreamBroken("cut"), now: self.now)  // moved bytes: at once
        #expect(machine.transferEnded(refused, now: self.now) == [.releaseSlot, .scheduleRetry(.seconds(1)), .persist])
        #expect(machine.waiting(now: self.now) == "retrying in 1 s (attempt 2 of 3: refused)")
        #expect(machine.retryDue() == [.enqueue])
        #expect(machine.slotGranted() == [.startTransfer(range: .init(offset: 10, ifRange: Self.etag))])
        #expect(machine.transferEnded(refused, now: self.now) == [.releaseSlot, .scheduleRetry(.seconds(2)), .persist])
        _ = machine.retryDue()
        _ = machine.slotGranted()
        let last = machine.transferEnded(refused, now: self.now)
        #expect(
            last == [
                .releaseSlot, .finish(refused.withMessage("refused (3 attempts in a row)"), removePartial: true),
                .persist,
            ])
        #expect(machine.state == .completed)
    }

    @Test func backoffIsCappedAtItsLimit() {
        let policy = Machine.Policy(maxAttempts: 20)
        #expect((1...8).map { policy.backoff(after: $0) } == [1, 2, 4, 8, 16, 32, 60, 60].map { .seconds($0) })
    }

    @Test func aServerErrorWaitsAtLeastItsRetryAfter() {
        var machine = Machine(policy: .init())
        _ = machine.start()
        _ = machine.slotGranted()
        let busy = self.head(503, [("Retry-After", "7")])
        #expect(machine.headReceived(busy, now: self.date) == [.abortTransfer])
        #expect(!machine.isAccepting)
        let actions = machine.transferEnded(.upstreamBroken("aborted"), now: self.now)
        #expect(actions == [.releaseSlot, .scheduleRetry(.seconds(7)), .persist])
        #expect(machine.lastError == "the origin answered 503")
    }

    @Test func aClientErrorFailsAtOnceWithoutRetry() {
        var machine = Machine(policy: .init())
        _ = machine.start()
        _ = machine.slotGranted()
        #expect(machine.headReceived(self.head(404), now: self.date) == [.abortTransfer])
        let actions = machine.transferEnded(.upstreamBroken("aborted"), now: self.now)
        #expect(
            actions == [.releaseSlot, .finish(.httpError("the origin answered 404"), removePartial: true), .persist])
    }

    @Test func aWholeResourceInsteadOfTheRestStartsAgainFromThatAnswer() {
        var machine = self.receiving()
        machine.bodyWritten(30)
        _ = machine.transferEnded(.upstreamBroken("cut"), now: self.now)
        let actions = machine.headReceived(self.full(100), now: self.date)
        #expect(actions == [.truncateFile, .persist])
        #expect(machine.offset == 0)
        #expect(machine.isAccepting)
        #expect(machine.restarts.count == 1)
        #expect(machine.restarts[0].reason.contains("instead of the rest from 30"))
        #expect(machine.resumes.isEmpty)
    }

    @Test func aChangedValidatorStartsAgainAndSaysSo() {
        var machine = self.receiving()
        machine.bodyWritten(30)
        _ = machine.transferEnded(.upstreamBroken("cut"), now: self.now)
        _ = machine.headReceived(self.full(120, etag: #""v2""#), now: self.date)
        #expect(machine.restarts[0].reason.hasPrefix("the resource changed"))
        #expect(machine.validator == .entityTag(#""v2""#))
        #expect(machine.total == 120)
    }

    @Test func aPartialAnswerThatDoesNotContinueTheFileIsNeverJoined() {
        for bad in [
            self.partial(from: 20, total: 100),  // wrong offset
            self.partial(from: 30, total: 100, etag: #""v2""#),  // another version
            self.partial(from: 30, total: 150),  // another length
            self.head(206, [("Content-Range", "bytes */100")]),  // not a range
        ] {
            var machine = self.receiving()
            machine.bodyWritten(30)
            _ = machine.transferEnded(.upstreamBroken("cut"), now: self.now)
            let actions = machine.headReceived(bad, now: self.date)
            #expect(actions == [.abortTransfer])
            #expect(!machine.isAccepting)
            if bad.headers.first("content-range") == "bytes */100" {
                #expect(
                    machine.transferEnded(nil, now: self.now).contains { if case .finish = $0 { true } else { false } })
                continue
            }
            #expect(machine.restarts.count == 1)
            #expect(
                machine.transferEnded(.upstreamBroken("aborted"), now: self.now) == [
                    .truncateFile, .startTransfer(range: nil),
                ])
            #expect(machine.offset == 0)
        }
    }

    @Test func aRangeNotSatisfiableStartsAgainFromZero() {
        var machine = self.receiving()
        machine.bodyWritten(30)
        _ = machine.transferEnded(.upstreamBroken("cut"), now: self.now)
        #expect(machine.headReceived(self.head(416), now: self.date) == [.abortTransfer])
        #expect(machine.transferEnded(nil, now: self.now) == [.truncateFile, .startTransfer(range: nil)])
        #expect(machine.restarts.count == 1)
    }

    @Test func withoutAValidatorTheBytesSoFarAreNotTrusted() {
        var machine = Machine(policy: .init())
        _ = machine.start()
        _ = machine.slotGranted()
        _ = machine.headReceived(self.full(100, etag: nil), now: self.date)
        #expect(machine.validator == nil)
        machine.bodyWritten(50)
        #expect(
            machine.transferEnded(.upstreamBroken("cut"), now: self.now) == [.truncateFile, .startTransfer(range: nil)])
        #expect(machine.restarts.count == 1)
    }

    @Test func aWeakEntityTagIsNoValidatorButLastModifiedIs() {
        let weak = ResourceValidator(headers: [HTTPHeaderField("ETag", #"W/"x""#)])
        #expect(weak == nil)
        let dated = ResourceValidator(headers: [
            HTTPHeaderField("ETag", #"W/"x""#), HTTPHeaderField("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
        ])
        #expect(dated == .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"))
    }

    @Test func aBodyShorterThanAnnouncedIsRetriedALongerOneFails() {
        var short = self.receiving()
        short.bodyWritten(60)
        #expect(
            short.transferEnded(nil, now: self.now) == [.startTransfer(range: .init(offset: 60, ifRange: Self.etag))])
        var long = self.receiving()
        long.bodyWritten(160)
        let actions = long.transferEnded(nil, now: self.now)
        #expect(actions.first == .releaseSlot)
        #expect(
            actions.contains(
                .finish(.lengthMismatch("the origin sent 160 bytes of an announced 100"), removePartial: true)))
    }

    @Test func suspendStopsTheTransferAndResumeQueuesAgain() throws {
        var machine = self.receiving()
        machine.bodyWritten(20)
        #expect(try machine.suspend() == [.abortTransfer, .publishSuspended])
        #expect(!machine.isAccepting)
        #expect(machine.transferEnded(.canceled(), now: self.now) == [.releaseSlot, .persist])
        #expect(machine.phase == .idle)
        #expect(try machine.resume() == [.publishResumed, .enqueue, .persist])
        #expect(machine.slotGranted() == [.startTransfer(range: .init(offset: 20, ifRange: Self.etag))])
    }

    @Test func aSuspendedDownloadWaitingToRetryForgetsItsTimer() throws {
        var machine = self.receiving()
        _ = machine.transferEnded(.connectionRefused("no"), now: self.now)
        #expect(try machine.suspend() == [.publishSuspended, .persist])
        #expect(machine.retryDue() == [])
        #expect(machine.waiting(now: self.now) == nil)
    }

    @Test func aRestoredSuspendedDownloadStaysSuspended() throws {
        var machine = Machine(
            policy: .init(), state: .suspended, offset: 50, total: 100, validator: .entityTag(Self.etag))
        #expect(machine.start() == [])
        #expect(machine.state == .suspended)
        _ = try machine.resume()
        #expect(machine.slotGranted() == [.startTransfer(range: .init(offset: 50, ifRange: Self.etag))])
    }

    @Test func aRestoredCompleteFileGoesStraightToFinishing() {
        var machine = Machine(policy: .init(), offset: 100, total: 100, validator: .entityTag(Self.etag))
        _ = machine.start()
        #expect(machine.slotGranted() == [.finalize])
    }

    @Test func cancelWhileTransferringEndsOnceTheTransferEnds() throws {
        var machine = self.receiving()
        #expect(try machine.cancel(.canceled()) == [.abortTransfer])
        #expect(
            machine.transferEnded(.canceled(), now: self.now) == [
                .releaseSlot, .finish(.canceled(), removePartial: true), .persist,
            ])
        #expect(throws: IllegalTransition.self) { try machine.resume() }
    }

    @Test func cancelWhileQueuedEndsAtOnceAndKeepsThePartialWhenAsked() throws {
        var machine = Machine(policy: .init(), keepPartial: true)
        _ = machine.start()
        #expect(try machine.cancel(.canceled()) == [.finish(.canceled(), removePartial: false), .persist])
        #expect(machine.slotGranted() == [.releaseSlot])
    }

    @Test func aFileThatCannotTakeTheBytesFailsTheTask() {
        var machine = self.receiving()
        let full = TaskFailure.diskFull("no space")
        #expect(machine.fileFailed(full) == [.abortTransfer])
        #expect(
            machine.transferEnded(.canceled(), now: self.now) == [
                .releaseSlot, .finish(full, removePartial: true), .persist,
            ])
    }

    @Test func aLostNetworkStopsTheAttemptAndSpendsNoRetry() {
        var machine = self.receiving(maxAttempts: 2)
        machine.bodyWritten(30)
        #expect(machine.networkLost() == [.abortTransfer])
        #expect(machine.transferEnded(.upstreamBroken("link down"), now: self.now) == [.releaseSlot, .persist])
        #expect(machine.waiting(now: self.now) == "waiting for network")
        #expect(machine.failuresInARow == 0)
        #expect(machine.networkLost() == [])
        #expect(machine.networkRestored() == [.enqueue])
        #expect(machine.slotGranted() == [.startTransfer(range: .init(offset: 30, ifRange: Self.etag))])
    }

    @Test func whileTheNetworkIsDownNothingStartsAndRetriesWait() throws {
        var machine = Machine(policy: .init())
        _ = machine.networkLost()
        _ = machine.start()
        #expect(machine.slotGranted() == [.releaseSlot])
        #expect(machine.phase == .waitingForNetwork)
        // A failure that raced the loss is not counted either.
        var racing = self.receiving()
        _ = racing.networkLost()
        _ = racing.transferEnded(.connectionRefused("no route"), now: self.now)
        #expect(racing.failuresInARow == 0)
        // Suspended while waiting: resume waits again rather than queueing.
        #expect(try machine.suspend() == [.publishSuspended, .persist])
        #expect(try machine.resume() == [.publishResumed, .persist])
        #expect(machine.phase == .waitingForNetwork)
        #expect(try machine.cancel(.canceled()) == [.finish(.canceled(), removePartial: true), .persist])
    }

    @Test func aRetryDueWhileTheNetworkIsDownWaitsForIt() {
        var machine = self.receiving()
        _ = machine.transferEnded(.connectionRefused("no"), now: self.now)
        #expect(machine.networkLost() == [])
        #expect(machine.phase == .waitingForNetwork)
        #expect(machine.retryDue() == [])
        #expect(machine.networkRestored() == [.enqueue])
    }

    @Test func aChecksumMismatchAtTheEndFails() {
        var machine = self.receiving()
        machine.bodyWritten(100)
        _ = machine.transferEnded(nil, now: self.now)
        let wrong = TaskFailure.checksumMismatch("wrong")
        #expect(machine.finalized(wrong) == [.releaseSlot, .finish(wrong, removePartial: true), .persist])
        // Completed and its failure in one step: a record read before `.finish` runs shows both.
        #expect(machine.state == .completed && machine.endFailure == wrong)
    }
}

@Suite struct DownloadFieldsTests {
    @Test func contentRangeTakesOneSatisfiedRangeOnly() {
        #expect(ContentRange("bytes 0-99/100") == ContentRange(first: 0, last: 99, completeLength: 100))
        #expect(ContentRange("bytes 5-9/*") == ContentRange(first: 5, last: 9, completeLength: nil))
        for bad in ["bytes */100", "bytes 9-5/100", "bytes 0-100/100", "items 0-1/2", "bytes +1-2/3", "bytes 1-2"] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test func retryAfterTakesSecondsOrADate() {
        let now = HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")!
        #expect(RetryAfter.delay("120", now: now) == .seconds(120))
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:50:07 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == .seconds(0))
        #expect(RetryAfter.delay("soon", now: now) == nil)
        #expect(RetryAfter.delay("-1", now: now) == nil)
    }

    @Test func anIMFFixdateReadsBackAsFormatted() {
        #expect(HTTPDate.parse(HTTPDate.format(secondsSince1970: 784_111_777)) == 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
    }
}

@Suite struct ContentDispositionTests {
    @Test func takesTheExtendedNameBeforeThePlainOneAndOnlyItsLastSegment() {
        #expect(ContentDisposition.fileName(#"attachment; filename="x.bin""#) == "x.bin")
        #expect(ContentDisposition.fileName("attachment; filename=plain.txt") == "plain.txt")
        #expect(
            ContentDisposition.fileName(#"attachment; filename="a.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt"#)
                == "€ rates.txt")
        #expect(ContentDisposition.fileName(#"attachment; filename="semi;colon \"q\".txt""#) == #"semi;colon "q".txt"#)
        #expect(ContentDisposition.fileName(#"attachment; filename="../../etc/passwd""#) == "passwd")
    }

    @Test func suggestsNothingUnusable() {
        for value in [
            "attachment", #"attachment; filename="""#, #"attachment; filename="..""#, "inline; filename=\u{1}x",
        ] {
            #expect(ContentDisposition.fileName(value) == nil, "\(value)")
        }
    }
}

@Suite struct LoopbackHostTests {
    @Test func thisMachineIsLoopbackTheRestIsNot() {
        for host in ["localhost", "a.localhost", "127.0.0.1", "127.9.8.7", "::1", "LOCALHOST"] {
            #expect(LoopbackHost.contains(host), "\(host)")
        }
        for host in ["10.0.0.1", "127.0.0", "example.org", "::2", "127.0.0.256", "localhost.example"] {
            #expect(!LoopbackHost.contains(host), "\(host)")
        }
    }

    @Test func theHostOfAURL() {
        #expect(LoopbackHost.host(ofURL: "http://u:p@h.example:8080/x?y") == "h.example")
        #expect(LoopbackHost.host(ofURL: "https://[::1]:443/") == "::1")
        #expect(LoopbackHost.host(ofURL: "http://127.0.0.1") == "127.0.0.1")
        #expect(LoopbackHost.host(ofURL: "no-scheme") == nil)
    }
}

@Suite struct PercentDecodingTests {
    @Test func escapesBecomeTheirBytesAndALoneSignStays() {
        #expect(PercentDecoding.decode("a%20b%e2%82%AC") == "a b€")
        #expect(PercentDecoding.decode("100%") == "100%")
        #expect(PercentDecoding.decode("%zz%4") == "%zz%4")
    }
}

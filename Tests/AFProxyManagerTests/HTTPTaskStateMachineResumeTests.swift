import AFProxyModel
import AFProxyTransport
import FoundationEssentials
import Testing

@testable import AFProxyManager

/// Transparent resume as the machine decides it: whether a broken response is continued, and
/// what becomes of the continuation's answer; no transfer, no thread.
@Suite struct HTTPTaskStateMachineResumeTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)
    private let broken = TaskFailure.upstreamBroken("upstream broke off")

    private func machine(limit: Int = 1) -> HTTPTaskStateMachine {
        var machine = HTTPTaskStateMachine(
            continuation: TransparentResume(method: "GET", headers: [], limit: limit))
        _ = machine.begin()
        return machine
    }

    private func head(_ status: Int, _ fields: [(String, String)]) -> ProxyResponseHead {
        ProxyResponseHead(
            status: status, reason: "", version: "HTTP/1.1",
            headers: HTTPHeaderList(fields.map { HTTPHeaderField($0.0, $0.1) }))
    }

    private var first: ProxyResponseHead {
        self.head(200, [("Content-Length", "10"), ("Accept-Ranges", "bytes"), ("ETag", "\"v1\"")])
    }

    private func rest(from offset: Int, etag: String = "\"v1\"") -> ProxyResponseHead {
        self.head(
            206, [("Content-Length", "\(10 - offset)"), ("Content-Range", "bytes \(offset)-9/10"), ("ETag", etag)])
    }

    @Test func aBreakAfterSomeBytesAsksForTheRestAndItsAnswerContinuesTheResponse() {
        var machine = self.machine()
        #expect(machine.finalHeadArrived(self.first, now: self.now) == .first)
        machine.responseBodyTaken(4)
        #expect(machine.complete(.failure(self.broken)) == .requestRest(.init(offset: 4, ifRange: "\"v1\"")))
        #expect(machine.state == .running)
        #expect(machine.finalHeadArrived(self.rest(from: 4), now: self.now) == .continued)
        #expect(machine.continuation?.resumes.map(\.offset) == [4])
        #expect(!machine.discarding)
        machine.responseBodyTaken(6)
        #expect(machine.complete(.success) == .finish(.success, release: 0))
    }

    @Test func anAnswerThatIsNotTheRestIsDroppedAndTheTaskEndsWithTheBreak() {
        var machine = self.machine()
        _ = machine.finalHeadArrived(self.first, now: self.now)
        machine.responseBodyTaken(4)
        _ = machine.complete(.failure(self.broken))
        guard
            case .notTheRest(let failure) = machine.finalHeadArrived(self.rest(from: 4, etag: "\"v2\""), now: self.now)
        else {
            Issue.record("accepted another version")
            return
        }
        #expect(failure.code == self.broken.code)
        #expect(failure.message.hasPrefix("upstream broke off; the origin's answer to the request for the rest (206)"))
        #expect(machine.discarding)
        // The stopped transfer's end is not continued again: the task ends as it said.
        #expect(machine.complete(.failure(failure)) == .finish(.failure(failure), release: 0))
    }

    @Test func aRefusedContinuationWhoseTransferCompletesStillEndsTheTaskWithTheBreak() {
        var machine = self.machine()
        _ = machine.finalHeadArrived(self.first, now: self.now)
        machine.bodyDeclared(10)
        machine.responseBodyTaken(4)
        _ = machine.complete(.failure(self.broken))
        guard case .notTheRest(let failure) = machine.finalHeadArrived(self.head(200, []), now: self.now) else {
            Issue.record("a 200 accepted as the rest")
            return
        }
        // The whole other version arrived (dropped) before the cancel reached curl.
        #expect(machine.complete(.success) == .finish(.failure(failure), release: 0))
    }

    @Test func aSuccessShortOfTheDeclaredLengthIsATruncation() {
        var short = self.machine()
        _ = short.finalHeadArrived(self.first, now: self.now)
        short.bodyDeclared(10)
        short.responseBodyTaken(4)
        guard case .finish(.failure(let failure), _) = short.complete(.success) else {
            Issue.record("4 of 10 bytes passed on as complete")
            return
        }
        #expect(failure.code == "upstream-broken")
        #expect(failure.message == "the body ended at 4 of 10 bytes")

        var whole = self.machine()
        _ = whole.finalHeadArrived(self.first, now: self.now)
        whole.bodyDeclared(10)
        whole.responseBodyTaken(10)
        #expect(whole.complete(.success) == .finish(.success, release: 0))

        var bodiless = self.machine()  // a HEAD, a 204 or a 304
        _ = bodiless.finalHeadArrived(self.first, now: self.now)
        bodiless.bodyDeclared(0)
        #expect(bodiless.complete(.success) == .finish(.success, release: 0))

        var undeclared = self.machine()  // chunked, or until the connection closes
        _ = undeclared.finalHeadArrived(self.head(200, []), now: self.now)
        undeclared.responseBodyTaken(7)
        #expect(undeclared.complete(.success) == .finish(.success, release: 0))
    }

    @Test func noContinuationWithoutARangeableFirstAnswerPastTheLimitOrWhileSuspended() throws {
        var plain = self.machine()
        _ = plain.finalHeadArrived(self.head(200, [("Content-Length", "10")]), now: self.now)
        plain.responseBodyTaken(4)
        #expect(plain.complete(.failure(self.broken)) == .finish(.failure(self.broken), release: 0))

        var once = self.machine(limit: 1)
        _ = once.finalHeadArrived(self.first, now: self.now)
        once.responseBodyTaken(2)
        _ = once.complete(.failure(self.broken))
        _ = once.finalHeadArrived(self.rest(from: 2), now: self.now)
        once.responseBodyTaken(2)
        #expect(once.complete(.failure(self.broken)) == .finish(.failure(self.broken), release: 0))

        var suspended = self.machine()
        _ = suspended.finalHeadArrived(self.first, now: self.now)
        suspended.responseBodyTaken(4)
        _ = try suspended.suspend()
        #expect(suspended.complete(.failure(self.broken)) == .finish(.failure(self.broken), release: 0))
    }
}

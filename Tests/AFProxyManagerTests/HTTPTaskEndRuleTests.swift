import AFProxyModel
import AFProxyTransport
import NIOCore
import Testing

@testable import AFProxyManager

/// The table at `HTTPTaskStateMachine`: every order in which curl's transfer, the response and
/// the client finish ends the task exactly once, without a transfer, a client or a thread. An
/// origin that closes after its answer and one that keeps the connection differ only in when
/// curl's end comes (or whether it comes at all), which each test plays out.
@Suite struct HTTPTaskEndRuleTests {
    private typealias Machine = HTTPTaskStateMachine
    private let now = ContinuousClock.now
    private let gone = TaskFailure.clientClosed("canceled: client closed the connection")

    private func fill(_ machine: inout Machine, _ count: Int) -> (RequestBodyRead, Machine.Action) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { buffer.deallocate() }
        return machine.fillRequestBody(buffer)
    }

    /// An upload of `Content-Length: 3` whose client sent the head only, with curl waiting for
    /// the body, and a response of `length` bytes on its way that the client has all of.
    private func earlyAnswered(length: Int64 = 15) -> (Machine, Machine.Action) {
        var machine = Machine()
        _ = machine.begin()
        _ = self.fill(&machine, 100)
        machine.responseHeadArrived()
        let action = machine.responseArrived(length: length)
        machine.delivered(Int(length))
        _ = machine.clientWrote(Int(length), now: self.now)
        return (machine, action)
    }

    private func isStop(_ action: Machine.Action) -> Bool {
        guard case .abort(let failure) = action else { return false }
        return failure.code == "client-closed"
    }

    // Row 1: curl's end ends the task, whatever else happened.

    @Test func curlsEndEndsTheTaskOnceInEveryState() throws {
        for prepare in [
            { (m: inout Machine) in }, { m in _ = try? m.suspend() }, { m in _ = try? m.cancel(.canceled()) },
        ] {
            var machine = Machine()
            prepare(&machine)
            #expect(machine.complete(.success) == .finish(.success, release: 0))
            #expect(machine.state == .completed)
            #expect(machine.complete(.failure(.canceled())) == .none)
            #expect(machine.clientClosed() == .none)
            #expect(machine.responseArrived(length: 0) == .none)
        }
    }

    // Row 3: a client that leaves before it had the whole response cancels the task.

    @Test func aClientThatLeavesBeforeTheWholeResponseCancelsTheTask() {
        var machine = Machine()
        #expect(machine.clientClosed() == .abort(self.gone))
        #expect(machine.complete(.failure(self.gone)) == .finish(.failure(self.gone), release: 0))
    }

    @Test func aClientThatLeavesWithPartOfTheResponseUnwrittenCancelsTheTask() {
        var machine = Machine()
        _ = machine.requestBodyEnded()
        #expect(machine.responseArrived(length: 100) == .none)
        machine.delivered(100)
        _ = machine.clientWrote(60, now: self.now)
        #expect(machine.clientClosed() == .abort(self.gone))
    }

    // Row 4: the client had everything and its request was complete: curl's end decides.

    @Test func aClientDoneWithAWholeExchangeLeavesTheEndToCurl() {
        var machine = Machine()
        _ = machine.requestBodyEnded()
        #expect(machine.responseArrived(length: 10) == .none)
        machine.delivered(10)
        _ = machine.clientWrote(10, now: self.now)
        #expect(machine.clientClosed() == .none)
        #expect(machine.clientGone)
        #expect(machine.complete(.success) == .finish(.success, release: 0))
    }

    @Test func aBodilessResponseIsWholeAtItsHead() {
        var machine = Machine()
        _ = machine.requestBodyEnded()
        #expect(machine.responseArrived(length: 0) == .none)
        #expect(machine.clientClosed() == .none)
    }

    // Row 5: a whole response before the request body was complete ends the task at once,
    // whatever its status (the machine is not told it: a 200 ends it as a 401 does) and
    // whatever the client then does (closes, stays silent, sends the body anyway).

    @Test func aWholeEarlyAnswerEndsTheTaskWhileTheClientStays() {
        for length: Int64 in [15, 0] {
            let (machine0, early) = self.earlyAnswered(length: length)
            var machine = machine0
            #expect(self.isStop(early), "length \(length)")
            // The client closes, or sends its body anyway: nothing more to decide.
            #expect(machine.clientClosed() == .none)
            _ = machine.requestBodyArrived(ByteBuffer(string: "abc"))
            _ = machine.requestBodyEnded()
            guard case .abort(let reason) = early else { continue }
            #expect(machine.complete(.failure(reason)) == .finish(.success, release: 0))
            #expect(machine.state == .completed)
        }
    }

    @Test func aWholeEarlyErrorWhoseCurlEndedFirstCompletesAsCurlSaid() {
        let (machine0, early) = self.earlyAnswered()
        var machine = machine0
        #expect(self.isStop(early))
        // curl ended the transfer itself before the stop reached it.
        #expect(machine.complete(.success) == .finish(.success, release: 0))
    }

    @Test func anErrorAfterTheWholeRequestBodyIsLeftToCurl() {
        var machine = Machine()
        _ = machine.requestBodyArrived(ByteBuffer(string: "abc"))
        _ = machine.requestBodyEnded()
        #expect(machine.responseArrived(length: 15) == .none)
        #expect(!machine.stoppedAfterResponse)
    }

    // A person's cancel after a stop does not turn the delivered response into a cancel.

    @Test func aCancelAfterTheStopStillCompletes() throws {
        let (machine0, early) = self.earlyAnswered()
        var machine = machine0
        #expect(self.isStop(early))
        #expect(try machine.cancel(.canceled()) == .abort(.canceled()))
        #expect(machine.complete(.failure(.canceled())) == .finish(.success, release: 0))
    }

    // Expect: 100-continue: the client is asked for its body the first time curl wants it.

    @Test func theClientIsAskedForItsBodyOnceWhenCurlFirstWantsIt() {
        var machine = Machine()
        #expect(self.fill(&machine, 100) == (.pause, .askForBody))
        #expect(self.fill(&machine, 100) == (.pause, .none))
        var sending = Machine()
        _ = sending.requestBodyArrived(ByteBuffer(string: "abc"))
        #expect(self.fill(&sending, 100) == (.bytes(3), .none))
        #expect(self.fill(&sending, 100) == (.pause, .none))  // it is sending already
    }
}

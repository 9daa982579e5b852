import AFProxyModel
import AFProxyTransport
import NIOCore
import Testing

@testable import AFProxyManager

/// The HTTP task's decisions, fed event by event without a transfer, a client or a thread.
@Suite struct HTTPTaskStateMachineTests {
    private typealias Machine = HTTPTaskStateMachine
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        self.start + .milliseconds(milliseconds)
    }

    private func bytes(_ count: Int) -> ByteBuffer {
        ByteBuffer(repeating: 0x61, count: count)
    }

    /// Hands curl up to `count` request bytes, as its read callback would ask.
    private func fill(_ machine: inout Machine, _ count: Int) -> (RequestBodyRead, Machine.Action) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { buffer.deallocate() }
        return machine.fillRequestBody(buffer)
    }

    // MARK: verbs

    @Test func suspendAndResumeActOnlyOnRealChanges() throws {
        var machine = Machine()
        #expect(try machine.suspend() == .suspend)
        #expect(machine.state == .suspended)
        #expect(throws: IllegalTransition(verb: "suspend", state: .suspended)) { try machine.suspend() }
        #expect(try machine.resume() == .resume)
        #expect(machine.state == .running)
        #expect(throws: IllegalTransition(verb: "resume", state: .running)) { try machine.resume() }
    }

    @Test func cancelAbortsOnceAndNoVerbAppliesAfter() throws {
        var machine = Machine()
        #expect(try machine.cancel(.canceled()) == .abort(.canceled()))
        #expect(machine.state == .canceling)
        #expect(throws: IllegalTransition(verb: "cancel", state: .canceling)) { try machine.cancel(.canceled()) }
        #expect(throws: IllegalTransition(verb: "suspend", state: .canceling)) { try machine.suspend() }
        #expect(throws: IllegalTransition(verb: "resume", state: .canceling)) { try machine.resume() }
        #expect(machine.clientFailed(.clientClosed("gone")) == .none)
    }

    @Test func cancelWhileSuspendedAbortsAndCompletesWithTheCancel() throws {
        var machine = Machine()
        _ = try machine.suspend()
        #expect(try machine.cancel(.canceled()) == .abort(.canceled()))
        #expect(machine.complete(.failure(.canceled())) == .finish(.failure(.canceled()), release: 0))
        #expect(machine.state == .completed)
        #expect(machine.failure == .canceled())
    }

    /// A record is read under the machine's lock alone: the step that completes a task keeps its
    /// failure, so no reader sees `completed` without the reason (the finishing work comes after).
    @Test func theStepThatCompletesKeepsTheFailure() throws {
        var machine = Machine()
        #expect(machine.failure == nil)
        _ = try machine.cancel(.canceled("canceled: stream reset by the client"))
        #expect(machine.failure == nil)  // not ended yet: the transfer's end decides
        _ = machine.complete(.failure(.canceled("canceled: stream reset by the client")))
        #expect(machine.state == .completed)
        #expect(machine.failure == .canceled("canceled: stream reset by the client"))

        var succeeded = Machine()
        #expect(succeeded.complete(.success) == .finish(.success, release: 0))
        #expect(succeeded.failure == nil)

        // A success short of its declared length completes as the failure it is.
        var short = Machine()
        short.bodyDeclared(10)
        short.responseBodyTaken(4)
        _ = short.complete(.success)
        #expect(short.failure?.code == TaskFailure.upstreamBroken("").code)
    }

    @Test func anUpstreamFailureWhileSuspendedFinishesTheTask() throws {
        var machine = Machine()
        _ = try machine.suspend()
        let broken = TaskFailure.upstreamBroken("upstream failed: Connection reset by peer")
        #expect(machine.complete(.failure(broken)) == .finish(.failure(broken), release: 0))
        #expect(throws: IllegalTransition(verb: "resume", state: .completed)) { try machine.resume() }
    }

    @Test func aCompletionThatWinsTheRaceWithACancelCompletesOnce() throws {
        var machine = Machine()
        #expect(try machine.cancel(.canceled()) == .abort(.canceled()))
        // curl completed the transfer before the cancel reached it: what happened is recorded.
        #expect(machine.complete(.success) == .finish(.success, release: 0))
        #expect(machine.complete(.failure(.canceled())) == .none)
        #expect(throws: IllegalTransition(verb: "cancel", state: .completed)) { try machine.cancel(.canceled()) }
    }

    @Test func aClientThatGoesAwayCancelsARunningTask() {
        var machine = Machine()
        let gone = TaskFailure.clientClosed("canceled: client closed the connection")
        #expect(machine.clientFailed(gone) == .abort(gone))
        #expect(machine.state == .canceling)
    }

    // MARK: the request body

    @Test func curlWaitingForRequestBytesIsWokenOnceTheyArrive() {
        var machine = Machine()
        #expect(self.fill(&machine, 100) == (.pause, .askForBody))
        let (keepReading, action) = machine.requestBodyArrived(self.bytes(10))
        #expect(keepReading && action == .continueSending)
        // Woken once: more bytes while curl has not asked again need no second wake.
        #expect(machine.requestBodyArrived(self.bytes(10)).action == .none)
        #expect(self.fill(&machine, 100) == (.bytes(20), .none))
        #expect(self.fill(&machine, 100) == (.pause, .none))
        #expect(machine.requestBodyEnded() == .continueSending)
        #expect(self.fill(&machine, 100) == (.end, .none))
    }

    @Test func aFullUploadBufferStopsTheClientUntilCurlTookEnough() {
        var machine = Machine()
        let chunk = 256 << 10
        var keepReading = true
        for _ in 0..<4 { keepReading = machine.requestBodyArrived(self.bytes(chunk)).keepReading }
        #expect(!keepReading)  // 1 MiB: the high watermark
        #expect(self.fill(&machine, chunk) == (.bytes(chunk), .none))
        #expect(self.fill(&machine, chunk) == (.bytes(chunk), .none))
        #expect(self.fill(&machine, chunk) == (.bytes(chunk), .none))  // 256 KiB left: the low watermark
        #expect(self.fill(&machine, chunk) == (.bytes(chunk), .readClient))  // below it
        #expect(machine.requestBodyArrived(self.bytes(1)).keepReading)
    }

    @Test func aSuspendedTaskHandsCurlNoRequestBytesAndWakesItOnlyByTheResume() throws {
        var machine = Machine()
        #expect(self.fill(&machine, 100) == (.pause, .askForBody))
        _ = try machine.suspend()
        #expect(machine.requestBodyArrived(self.bytes(10)).action == .none)
        #expect(self.fill(&machine, 100) == (.pause, .none))
        #expect(try machine.resume() == .resume)
        #expect(self.fill(&machine, 100) == (.bytes(10), .none))
    }

    @Test func aRewindHandsTheSentBytesOutAgainUntilTheHeadArrived() {
        var machine = Machine()
        _ = machine.requestBodyArrived(self.bytes(30))
        _ = machine.requestBodyEnded()
        #expect(self.fill(&machine, 100) == (.bytes(30), .none))
        #expect(machine.rewindRequestBody() == 30)
        #expect(self.fill(&machine, 100) == (.bytes(30), .none))
        machine.responseHeadArrived()
        #expect(machine.rewindRequestBody() == nil)
    }

    // MARK: the response body

    @Test func aFullWindowPausesReceivingUntilTheClientDrainsHalf() {
        var machine = Machine()
        let window = ReceiveWindow.minimum
        #expect(machine.responseBodyArrived(waiting: window - 1, now: self.at(1)) == .taken)
        #expect(machine.responseBodyArrived(waiting: window, now: self.at(2)) == .takenWindowFull)
        machine.delivered(window)
        #expect(machine.clientWrote(window / 2, now: self.at(3)) == .none)  // at the low watermark, not below
        #expect(machine.clientWrote(1, now: self.at(4)) == .continueReceiving(resize: .keep))
        // Not blocked any more: further writes continue nothing.
        #expect(machine.clientWrote(window / 2 - 1, now: self.at(5)) == .none)
        #expect(machine.inFlight == 0)
    }

    /// A prompt drain with nothing left unsent in the client's kernel queue doubles the window
    /// early; the queue is asked only when the answer could change the decision.
    @Test func aPromptDrainWithNothingUnsentGrowsTheWindowEarly() {
        var machine = Machine()
        let window = ReceiveWindow.minimum
        #expect(machine.responseBodyArrived(waiting: window, now: self.at(1)) == .takenWindowFull)
        machine.delivered(window)
        var asked = 0
        func unsent(_ value: Int?) -> Int? {
            asked += 1
            return value
        }
        #expect(machine.clientWrote(window / 2, now: self.at(2), unsent: unsent(0)) == .none)
        #expect(asked == 0)
        #expect(
            machine.clientWrote(1, now: self.at(3), unsent: unsent(0))
                == .continueReceiving(resize: .grow(reserve: window)))
        #expect(asked == 1)
        machine.resizeWindow(.grow(reserve: window))
        #expect(machine.window.size == 2 * window)
        // Bytes left unsent: the client's side does not keep up, the window stays.
        #expect(machine.responseBodyArrived(waiting: 2 * window, now: self.at(4)) == .takenWindowFull)
        machine.delivered(2 * window)
        #expect(
            machine.clientWrote(2 * window, now: self.at(5), unsent: unsent(4096)) == .continueReceiving(resize: .keep))
    }

    @Test func aClientThatDrainsSlowlyShrinksItsWindow() {
        var machine = Machine()
        machine.resizeWindow(.grow(reserve: ReceiveWindow.minimum))
        let window = machine.window.size
        #expect(machine.responseBodyArrived(waiting: window, now: self.at(0)) == .takenWindowFull)
        machine.delivered(window)
        let action = machine.clientWrote(window, now: self.at(2000))
        #expect(action == .continueReceiving(resize: .shrink(release: window - ReceiveWindow.minimum)))
    }

    @Test func suspendDuringBackpressureRefusesBytesAndTheResumeAloneContinues() throws {
        var machine = Machine()
        #expect(machine.responseBodyArrived(waiting: ReceiveWindow.minimum, now: self.at(1)) == .takenWindowFull)
        machine.delivered(ReceiveWindow.minimum)
        #expect(try machine.suspend() == .suspend)
        #expect(machine.responseBodyArrived(waiting: 1, now: self.at(2)) == .refused)
        // The client drains while suspended: nothing continues before the resume.
        #expect(machine.clientWrote(ReceiveWindow.minimum, now: self.at(3)) == .none)
        #expect(try machine.resume() == .resume)
        #expect(machine.responseBodyArrived(waiting: 1, now: self.at(4)) == .taken)
    }

    @Test func theFinishGivesBackWhatTheWindowReserved() {
        var machine = Machine()
        machine.resizeWindow(.grow(reserve: 8192))
        #expect(machine.complete(.success) == .finish(.success, release: 8192))
        machine.resizeWindow(.grow(reserve: 8192))  // a late growth after the end changes nothing
        #expect(machine.window.reserved == 8192)
    }
}

/// A task a hold rule caught: created suspended, its transfer started only by the release.
@Suite struct HTTPTaskHoldTests {
    @Test func aTaskNotHeldStartsAtBegin() {
        var machine = HTTPTaskStateMachine()
        #expect(machine.begin() == .start)
        #expect(machine.begin() == .none)
    }

    @Test func aSuspendBeforeBeginStillStartsTheTransferPaused() throws {
        var machine = HTTPTaskStateMachine()
        #expect(try machine.suspend() == .suspend)
        #expect(machine.begin() == .start)
        #expect(try machine.resume() == .resume)
    }

    @Test func aHeldTaskStartsOnlyWhenReleased() throws {
        var machine = HTTPTaskStateMachine(heldBy: 7)
        #expect(machine.state == .suspended && machine.heldBy == 7)
        #expect(machine.begin() == .hold(rule: 7))
        #expect(try machine.resume() == .release(start: true))
        #expect(machine.state == .running && machine.heldBy == nil)
        #expect(try machine.suspend() == .suspend)
        #expect(try machine.resume() == .resume)
    }

    @Test func aReleaseBeforeBeginLeavesTheStartToBegin() throws {
        var machine = HTTPTaskStateMachine(heldBy: 1)
        #expect(try machine.resume() == .release(start: false))
        #expect(machine.begin() == .start)
    }

    @Test func theBodyWaitsWhileHeld() throws {
        var machine = HTTPTaskStateMachine(heldBy: 1)
        _ = machine.begin()
        let (keepReading, action) = machine.requestBodyArrived(ByteBuffer(repeating: 0x61, count: 1000))
        #expect(keepReading && action == .none)
        #expect(machine.upload.bytes == 1000)
    }

    @Test func aHeldTaskCanceledAbortsAndIsNeverHeldAgain() throws {
        var machine = HTTPTaskStateMachine(heldBy: 3)
        #expect(try machine.cancel(.canceled()) == .abort(.canceled()))
        #expect(machine.begin() == .none)
    }
}

import AFProxyModel
import NIOCore
import Testing

@testable import AFProxyManager

/// Edits at a request hold, as the machine decides them: only a held task is editable, a new body
/// replaces the client's (whose bytes are then dropped), and an answer from the proxy ends the
/// task through its transfer's end without ever starting it.
@Suite struct HTTPTaskEditTests {
    @Test func onlyAHeldTaskMayBeEdited() throws {
        var running = HTTPTaskStateMachine()
        _ = running.begin()
        #expect(throws: IllegalTransition(verb: "edit", state: .running)) { try running.mayEdit("edit") }
        _ = try running.suspend()
        #expect(throws: IllegalTransition.self) { try running.mayEdit("edit") }
        do {
            try running.mayEdit("edit")
        } catch {
            #expect(error.reason?.contains("suspended, not held") == true)
        }
        var held = HTTPTaskStateMachine(heldBy: 2)
        _ = held.begin()
        try held.mayEdit("edit")
        _ = try held.resume()
        #expect(throws: IllegalTransition.self) { try held.mayEdit("edit") }
    }

    @Test func aReplacedBodyIsSentAndTheClientsIsDropped() throws {
        var machine = HTTPTaskStateMachine(heldBy: 1)
        _ = machine.begin()
        _ = machine.requestBodyArrived(ByteBuffer(repeating: 0x61, count: 300))  // arrived with the head
        machine.requestEdited(continuation: nil, body: ByteBuffer(string: "edited"))
        #expect(machine.upload.bytes == 6 && machine.upload.ended)
        let (keepReading, action) = machine.requestBodyArrived(ByteBuffer(repeating: 0x62, count: 5000))
        #expect(keepReading && action == .none)
        #expect(machine.requestBodyEnded() == .none)
        #expect(machine.upload.bytes == 6)
        #expect(try machine.resume() == .release(start: true))
        var sent = [UInt8](repeating: 0, count: 64)
        let read = sent.withUnsafeMutableBytes { machine.fillRequestBody($0) }
        #expect(read.0 == .bytes(6))
        #expect(Array(sent[..<6]) == Array("edited".utf8))
        let end = sent.withUnsafeMutableBytes { machine.fillRequestBody($0) }
        #expect(end.0 == .end)
    }

    @Test func anAnswerEndsTheTaskWithoutStartingTheTransfer() throws {
        var machine = HTTPTaskStateMachine(heldBy: 4)
        #expect(machine.begin() == .hold(rule: 4))
        #expect(try machine.answer() == .abort(.canceled("answered by afproxy")))
        #expect(machine.state == .running && machine.heldBy == nil)
        #expect(throws: IllegalTransition.self) { try machine.answer() }
        // The never-started transfer ends (its cancel): the task completes with the answer.
        #expect(machine.complete(.failure(.canceled("answered by afproxy"))) == .finishAnswered(release: 0))
        #expect(machine.state == .completed)
        #expect(machine.complete(.success) == .none)
    }

    @Test func anAnswerBeforeBeginNeverStarts() throws {
        var machine = HTTPTaskStateMachine(heldBy: 1)
        _ = try machine.answer()
        #expect(machine.begin() == .none)
    }

    @Test func aMapLocalTaskNeverStartsAndEndsWithItsFile() throws {
        var machine = HTTPTaskStateMachine(answersLocally: true)
        #expect(machine.begin() == .none)
        #expect(machine.answerLocally() == .abort(.canceled("answered by afproxy")))
        #expect(machine.answerLocally() == .none)
        #expect(machine.complete(.failure(.canceled("answered by afproxy"))) == .finishAnswered(release: 0))
        var plain = HTTPTaskStateMachine()
        #expect(plain.answerLocally() == .none)  // only a task a map-local rule answers
    }

    @Test func aMapLocalTaskCanceledBeforeItsFileEndsCanceled() throws {
        var machine = HTTPTaskStateMachine(answersLocally: true)
        _ = machine.begin()
        #expect(try machine.cancel(.canceled()) == .abort(.canceled()))
        #expect(machine.answerLocally() == .none)
        #expect(machine.complete(.failure(.canceled())) == .finish(.failure(.canceled()), release: 0))
    }
}

/// A hold at the response, as the machine decides it: the head waits, the body is refused
/// (curl keeps it), and every way out — release, an answer, a cancel, an end while held — ends
/// the task once.
@Suite struct HTTPTaskResponseHoldTests {
    private func held() -> HTTPTaskStateMachine {
        var machine = HTTPTaskStateMachine()
        _ = machine.begin()
        #expect(machine.holdResponse(rule: 5) == .holdResponse(rule: 5))
        return machine
    }

    @Test func theHeadWaitsAndTheBodyIsRefusedUntilTheRelease() throws {
        var machine = self.held()
        #expect(machine.state == .suspended && machine.heldBy == 5 && machine.heldAtResponse)
        #expect(machine.responseBodyArrived(waiting: 100, now: .now) == .refused)
        #expect(throws: IllegalTransition.self) { try machine.mayEdit("edit") }
        try machine.mayEditResponse()
        #expect(try machine.resume() == .releaseResponse(finish: nil, release: 0))
        #expect(machine.state == .running && machine.heldBy == nil && !machine.heldAtResponse)
        #expect(machine.responseBodyArrived(waiting: 100, now: .now) == .taken)
    }

    @Test func anEndWhileHeldWaitsForTheRelease() throws {
        var machine = self.held()
        #expect(machine.complete(.success) == .none)
        #expect(machine.state == .suspended)
        #expect(try machine.resume() == .releaseResponse(finish: .success, release: 0))
        #expect(machine.state == .completed)
    }

    @Test func aCancelWhileHeldDropsTheHead() throws {
        var live = self.held()
        #expect(try live.cancel(.canceled()) == .abort(.canceled()))
        #expect(live.complete(.failure(.canceled())) == .finish(.failure(.canceled()), release: 0))
        #expect(live.heldResponseDropped)
        var ended = self.held()
        _ = ended.complete(.success)
        #expect(try ended.cancel(.canceled()) == .finish(.failure(.canceled()), release: 0))
        #expect(ended.heldResponseDropped && ended.state == .completed)
    }

    @Test func anAnswerReplacesTheOriginsResponse() throws {
        var live = self.held()
        #expect(try live.answer() == .abort(.canceled("answered by afproxy")))
        #expect(live.responseBodyArrived(waiting: 10, now: .now) == .refused)  // none of the origin's is taken
        #expect(live.complete(.failure(.canceled("answered by afproxy"))) == .finishAnswered(release: 0))
        var ended = self.held()
        _ = ended.complete(.success)
        #expect(try ended.answer() == .finishAnswered(release: 0))
    }

    @Test func aSuspendedTaskIsNotHeldAgain() throws {
        var machine = HTTPTaskStateMachine()
        _ = machine.begin()
        _ = try machine.suspend()
        #expect(machine.holdResponse(rule: 1) == .none)
        #expect(!machine.heldAtResponse)
    }
}

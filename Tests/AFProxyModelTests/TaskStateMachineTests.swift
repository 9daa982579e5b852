import AFProxyModel
import Testing

@Suite struct TaskStateMachineTests {
    @Test func suspendAndResumeAnswerTheirActionsOnlyOnRealChanges() throws {
        var machine = TaskStateMachine()
        #expect(try machine.suspend() == .pauseTransfer)
        #expect(machine.state == .suspended)
        #expect(throws: IllegalTransition(verb: "suspend", state: .suspended)) { try machine.suspend() }
        #expect(try machine.resume() == .resumeTransfer)
        #expect(machine.state == .running)
        #expect(throws: IllegalTransition(verb: "resume", state: .running)) { try machine.resume() }
    }

    @Test func cancelFromRunningOrSuspendedAbortsOnce() throws {
        var running = TaskStateMachine()
        #expect(try running.cancel() == .abortTransfer)
        #expect(running.state == .canceling)
        #expect(throws: IllegalTransition.self) { try running.cancel() }
        #expect(throws: IllegalTransition.self) { try running.suspend() }

        var suspended = TaskStateMachine(state: .suspended)
        #expect(try suspended.cancel() == .abortTransfer)
    }

    @Test func completedAcceptsNoVerbAndCompletesOnce() throws {
        var machine = TaskStateMachine()
        #expect(machine.complete() == .finish)
        #expect(machine.complete() == nil)
        #expect(throws: IllegalTransition(verb: "suspend", state: .completed)) { try machine.suspend() }
        #expect(throws: IllegalTransition(verb: "resume", state: .completed)) { try machine.resume() }
        #expect(throws: IllegalTransition(verb: "cancel", state: .completed)) { try machine.cancel() }
    }

    @Test func canceledTaskCompletes() throws {
        var machine = TaskStateMachine()
        _ = try machine.cancel()
        #expect(machine.complete() == .finish)
        #expect(machine.state == .completed)
    }

    @Test func illegalTransitionSaysWhat() {
        #expect("\(IllegalTransition(verb: "resume", state: .running))" == "cannot resume a task that is running")
    }
}

import AFProxyManager
import AFProxyModel
import Testing

@Suite struct StreamTaskStateMachineTests {
    @Test func suspendAndResumeAnswerTheirActionsOnlyOnRealChanges() throws {
        var machine = StreamTaskStateMachine()
        #expect(try machine.suspend() == .suspend)
        #expect(machine.state == .suspended)
        #expect(throws: IllegalTransition(verb: "suspend", state: .suspended)) { try machine.suspend() }
        #expect(try machine.resume() == .resume)
        #expect(machine.state == .running)
        #expect(throws: IllegalTransition(verb: "resume", state: .running)) { try machine.resume() }
    }

    @Test func cancelFromRunningOrSuspendedAbortsOnce() throws {
        var running = StreamTaskStateMachine()
        #expect(try running.cancel(.canceled()) == .abort(.canceled()))
        #expect(running.state == .canceling)
        #expect(throws: IllegalTransition.self) { try running.cancel(.canceled()) }
        #expect(throws: IllegalTransition.self) { try running.suspend() }
        #expect(running.clientClosed() == .none)

        var suspended = StreamTaskStateMachine(state: .suspended)
        #expect(try suspended.cancel(.canceled()) == .abort(.canceled()))
    }

    @Test func aClientThatLeavesBeforeTheTunnelOpensCancelsIt() {
        var machine = StreamTaskStateMachine()
        #expect(machine.clientClosed() == .abort(.clientClosed("canceled: client closed the connection")))
        #expect(machine.state == .canceling)
    }

    @Test func completedAcceptsNoVerbAndCompletesOnce() throws {
        var machine = StreamTaskStateMachine()
        let end = TunnelEnd(reason: "client closed")
        #expect(machine.complete(end) == .finish(end))
        #expect(machine.complete(end) == .none)
        #expect(throws: IllegalTransition(verb: "suspend", state: .completed)) { try machine.suspend() }
        #expect(throws: IllegalTransition(verb: "resume", state: .completed)) { try machine.resume() }
        #expect(throws: IllegalTransition(verb: "cancel", state: .completed)) { try machine.cancel(.canceled()) }
        #expect(machine.clientClosed() == .none)
    }

    @Test func aSuspendedOrCanceledTunnelCompletesWithWhatItsTransportReports() throws {
        var suspended = StreamTaskStateMachine(state: .suspended)
        let broken = TunnelEnd(.upstreamBroken("upstream connection failed: Connection reset by peer"))
        #expect(suspended.complete(broken) == .finish(broken))

        var canceled = StreamTaskStateMachine()
        _ = try canceled.cancel(.canceled())
        #expect(canceled.complete(TunnelEnd(.canceled())) == .finish(TunnelEnd(.canceled())))
        #expect(canceled.state == .completed)
    }

    @Test func illegalTransitionSaysWhat() {
        #expect("\(IllegalTransition(verb: "resume", state: .running))" == "cannot resume a task that is running")
    }
}

@Suite struct StreamTaskHoldTests {
    @Test func aTaskNotHeldStartsAtBegin() {
        var machine = StreamTaskStateMachine()
        #expect(machine.begin() == .start)
        #expect(machine.begin() == .none)
        #expect(machine.heldBy == nil)
    }

    @Test func aHeldTaskStartsOnlyWhenReleased() throws {
        var machine = StreamTaskStateMachine(heldBy: 4)
        #expect(machine.state == .suspended && machine.heldBy == 4)
        #expect(machine.begin() == .hold(rule: 4))
        #expect(throws: IllegalTransition(verb: "suspend", state: .suspended)) { try machine.suspend() }
        #expect(try machine.resume() == .release(start: true))
        #expect(machine.state == .running && machine.heldBy == nil)
        // From here it is an ordinary task.
        #expect(try machine.suspend() == .suspend)
        #expect(try machine.resume() == .resume)
    }

    @Test func aReleaseBeforeBeginLeavesTheStartToBegin() throws {
        var machine = StreamTaskStateMachine(heldBy: 1)
        #expect(try machine.resume() == .release(start: false))
        #expect(machine.begin() == .start)
    }

    @Test func aHeldTaskCanceledAbortsAndNeverStarts() throws {
        var machine = StreamTaskStateMachine(heldBy: 2)
        #expect(machine.begin() == .hold(rule: 2))
        #expect(try machine.cancel(.canceled()) == .abort(.canceled()))
        #expect(machine.heldBy == 2)  // it ended held
        var early = StreamTaskStateMachine(heldBy: 2)
        #expect(early.clientClosed() == .abort(.clientClosed("canceled: client closed the connection")))
        #expect(early.begin() == .none)
    }

    @Test func aHeldTunnelWhoseClientHalfClosesWithNothingSentEnds() throws {
        var held = StreamTaskStateMachine(heldBy: 3)
        #expect(held.begin() == .hold(rule: 3))
        let closed = StreamTaskStateMachine.Action.abort(.clientClosed("canceled: client closed the connection"))
        #expect(held.clientHalfClosed(sentBytes: false) == closed)
        #expect(held.state == .canceling)
        // Bytes sent first: the client meant them to go through; the release carries them on.
        var sent = StreamTaskStateMachine(heldBy: 3)
        #expect(sent.begin() == .hold(rule: 3))
        #expect(sent.clientHalfClosed(sentBytes: true) == .none)
        #expect(try sent.resume() == .release(start: true))
        // Not held (connecting, or released): the tunnel goes on.
        var connecting = StreamTaskStateMachine()
        #expect(connecting.begin() == .start)
        #expect(connecting.clientHalfClosed(sentBytes: false) == .none)
        var released = StreamTaskStateMachine(heldBy: 3)
        _ = released.begin()
        _ = try released.resume()
        #expect(released.clientHalfClosed(sentBytes: false) == .none)
        #expect(released.state == .running)
    }
}

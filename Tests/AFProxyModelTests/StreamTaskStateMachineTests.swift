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

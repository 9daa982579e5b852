import AFProxyManager
import AFProxyModel
import Testing

/// A download a hold rule caught: the machine keeps the rule until a person resumes the task.
@Suite struct DownloadStateMachineHoldTests {
    @Test func aHeldDownloadIsSuspendedWithItsRuleUntilResumed() throws {
        var machine = DownloadStateMachine(policy: .init(), heldBy: 7)
        #expect((machine.state, machine.heldBy) == (.suspended, 7))
        #expect(machine.start().isEmpty)  // waits: no slot asked for
        #expect(throws: IllegalTransition.self) { try machine.suspend() }
        #expect(machine.heldBy == 7)  // a refused verb releases nothing
        #expect(try machine.resume() == [.publishResumed, .enqueue, .persist])
        #expect((machine.state, machine.heldBy) == (.running, nil))
    }

    @Test func aCanceledHeldDownloadKeepsItsRuleInItsRecord() throws {
        var machine = DownloadStateMachine(policy: .init(), heldBy: 3)
        _ = machine.start()
        _ = try machine.cancel(.canceled())
        #expect(machine.heldBy == 3)
    }

    @Test func aDownloadNoRuleCaughtHasNone() throws {
        var machine = DownloadStateMachine(policy: .init())
        _ = machine.start()
        _ = try machine.suspend()
        _ = try machine.resume()
        #expect(machine.heldBy == nil)
    }
}

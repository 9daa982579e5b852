import AFProxyManager
import AFProxyModel
import FoundationEssentials
import Testing

/// A cancel and a download's completion ordered at the rename (issue 22): the cancel either wins
/// (no rename, the task ends canceled) or loses (refused, the task completes with its file); the
/// task never says canceled with the file in place, nor completed without it.
@Suite struct DownloadFinishingTests {
    typealias Machine = DownloadStateMachine

    /// A machine whose body is complete and whose file is being checked (`finalize` sent).
    func checking(keepPartial: Bool = false) -> Machine {
        var machine = Machine(policy: .init(), keepPartial: keepPartial)
        _ = machine.start()
        _ = machine.slotGranted()
        let head = ProxyResponseHead(
            status: 200, reason: "OK", version: "1.1", headers: [HTTPHeaderField("Content-Length", "10")])
        _ = machine.headReceived(head, now: Date())
        machine.bodyWritten(10)
        #expect(machine.transferEnded(nil, now: .now) == [.finalize])
        return machine
    }

    @Test func aCancelDuringTheCheckWinsTheFileIsNotRenamed() throws {
        var machine = self.checking()
        #expect(try machine.cancel(.canceled()) == [])
        #expect(machine.state == .canceling)
        let renames = machine.renameDue()
        #expect(!renames)
        #expect(
            machine.finalized(nil) == [.releaseSlot, .finish(.canceled(), removePartial: true), .persist])
        #expect(machine.state == .completed)
    }

    @Test func aCancelDuringTheCheckKeepsThePartialFileWhenAsked() throws {
        var machine = self.checking(keepPartial: true)
        _ = try machine.cancel(.canceled())
        let renames = machine.renameDue()
        #expect(!renames)
        #expect(
            machine.finalized(nil) == [.releaseSlot, .finish(.canceled(), removePartial: false), .persist])
    }

    @Test func aCancelOnceTheRenameIsDueIsRefusedAndTheTaskCompletes() {
        var machine = self.checking()
        let renames = machine.renameDue()
        #expect(renames)
        #expect(machine.phase == .renaming)
        #expect(throws: IllegalTransition.self) { try machine.cancel(.canceled()) }
        #expect(machine.state == .running)
        #expect(machine.finalized(nil) == [.releaseSlot, .finish(nil, removePartial: false), .persist])
        #expect(machine.state == .completed)
    }

    @Test func theRefusalSaysWhy() {
        var machine = self.checking()
        _ = machine.renameDue()
        do {
            _ = try machine.cancel(.canceled())
            Issue.record("the cancel was accepted during the rename")
        } catch {
            let why = "the file is complete and being renamed into place"
            #expect(error.description == "cannot cancel the task now: \(why)")
        }
    }

    @Test func aFailedCheckEndsWithItsFailureWithoutAskingForTheRename() {
        var machine = self.checking()
        let wrong = TaskFailure.checksumMismatch("wrong")
        #expect(machine.finalized(wrong) == [.releaseSlot, .finish(wrong, removePartial: true), .persist])
    }

    @Test func aSuspendDuringTheCheckDoesNotStopTheRename() throws {
        var machine = self.checking()
        _ = try machine.suspend()
        let renames = machine.renameDue()
        #expect(renames)
        #expect(machine.finalized(nil) == [.releaseSlot, .finish(nil, removePartial: false), .persist])
    }
}

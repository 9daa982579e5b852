import AFProxyManager
import AFProxyModel
import FoundationEssentials
import Testing

/// A download whose disk is slower than its origin (issue 23): the bytes on their way to the file
/// are bounded, the transfer pauses above the bound and receives again once the writer caught up,
/// and the offset, the progress and the retries count only bytes that are in the file.
@Suite struct DownloadDiskBackpressureTests {
    typealias Machine = DownloadStateMachine
    let chunk = 16 << 10

    func receiving(total: Int64 = 64 << 20) -> Machine {
        var machine = Machine(policy: .init())
        _ = machine.start()
        _ = machine.slotGranted()
        let head = ProxyResponseHead(
            status: 200, reason: "OK", version: "1.1",
            headers: [HTTPHeaderField("Content-Length", "\(total)"), HTTPHeaderField("ETag", #""v1""#)])
        _ = machine.headReceived(head, now: Date())
        return machine
    }

    func arrive(_ machine: inout Machine, _ count: Int) throws -> (offset: Int64, pause: Bool) {
        let answer = machine.bodyArrived(count)
        return try #require(answer)
    }

    @Test func bytesGoAfterTheOnesStillUnwrittenAndOnlyWrittenOnesCount() throws {
        var machine = self.receiving()
        let first = try self.arrive(&machine, 100)
        let second = try self.arrive(&machine, 50)
        #expect(first.offset == 0 && second.offset == 100)
        #expect(!first.pause && !second.pause)
        #expect(machine.offset == 0 && machine.unwritten == 150)
        #expect(machine.bodyWritten(100) == [])
        #expect(machine.offset == 100 && machine.unwritten == 50)
        let third = try self.arrive(&machine, 10)
        #expect(third.offset == 150)
    }

    @Test func aDiskThatFallsBehindPausesTheTransferUntilItCatchesUp() throws {
        var machine = self.receiving()
        var arrived = 0
        while true {
            let answer = try self.arrive(&machine, self.chunk)
            arrived += self.chunk
            if answer.pause { break }
        }
        #expect(arrived >= Machine.unwrittenLimit && arrived < Machine.unwrittenLimit + self.chunk)
        #expect(machine.waitingForDisk)
        #expect(machine.waiting(now: .now)?.contains("waiting for the disk") == true)
        var resumedAt: Int?
        while machine.unwritten > 0 {
            if machine.bodyWritten(self.chunk) == [.continueReceiving] {
                #expect(resumedAt == nil)
                resumedAt = machine.unwritten
            }
        }
        #expect(resumedAt.map { $0 <= Machine.unwrittenResume } == true)
        #expect(!machine.waitingForDisk && machine.waiting(now: .now) == nil)
        #expect(machine.offset == Int64(arrived))
    }

    @Test func aCancelDiscardsWhatIsQueuedAndTheEndWaitsForNothingElse() throws {
        var machine = self.receiving()
        _ = try self.arrive(&machine, self.chunk)
        _ = try self.arrive(&machine, self.chunk)
        #expect(machine.isWriteDue)
        #expect(try machine.cancel(.canceled()) == [.abortTransfer])
        #expect(!machine.isWriteDue)
        #expect(machine.bodyArrived(1) == nil)
        #expect(machine.bodyDropped(self.chunk) == [])
        #expect(machine.bodyDropped(self.chunk) == [])
        #expect(machine.unwritten == 0 && machine.offset == 0)
        #expect(
            machine.transferEnded(.canceled(), now: .now) == [
                .releaseSlot, .finish(.canceled(), removePartial: true), .persist,
            ])
    }

    @Test func aSuspendStillWritesWhatArrivedSoTheResumeContinuesAfterIt() throws {
        var machine = self.receiving()
        _ = try self.arrive(&machine, self.chunk)
        _ = try machine.suspend()
        #expect(machine.bodyArrived(1) == nil)
        #expect(machine.isWriteDue)
        machine.bodyWritten(self.chunk)
        #expect(machine.transferEnded(.canceled("attempt stopped"), now: .now) == [.releaseSlot, .persist])
        #expect(
            try machine.resume() == [
                .publishResumed, .enqueue, .persist,
            ])
        #expect(
            machine.slotGranted() == [.startTransfer(range: .init(offset: Int64(self.chunk), ifRange: #""v1""#))])
    }

    @Test func aFailedWriteFailsTheTaskAndTheBytesQueuedBehindItAreNotWritten() throws {
        var machine = self.receiving()
        _ = try self.arrive(&machine, self.chunk)
        _ = try self.arrive(&machine, self.chunk)
        let full = TaskFailure.diskFull("no space left on device")
        #expect(machine.bodyDropped(self.chunk) + machine.fileFailed(full) == [.abortTransfer])
        #expect(!machine.isWriteDue)
        _ = machine.bodyDropped(self.chunk)
        #expect(
            machine.transferEnded(.canceled("attempt stopped"), now: .now) == [
                .releaseSlot, .finish(full, removePartial: true), .persist,
            ])
    }

    @Test func aNewDownloadWhosePartialFileCannotBePreparedEndsWithThatFailure() {
        var machine = Machine(policy: .init())
        let failure = TaskFailure.fileError("open: permission denied")
        #expect(machine.preparationFailed(failure) == [.finish(failure, removePartial: false), .persist])
        #expect(machine.state == .completed)
        #expect(machine.start() == [])
    }
}

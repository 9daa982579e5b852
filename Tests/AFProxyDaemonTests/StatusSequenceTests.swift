import Testing

@testable import AFProxyDaemon

/// STATUS= lines computed on two threads at once: an older snapshot's line is never sent after a
/// newer one, and the periodic reporter does not repeat an unchanged line.
@Suite struct StatusSequenceTests {
    @Test func anOlderSnapshotOfferedLastIsNotSent() {
        var sequence = StatusSequence()
        let older = sequence.ticket()  // the reporter reads "1 running"
        let newer = sequence.ticket()  // SIGTERM reads "stopping: 0 running"
        #expect(sequence.admit("stopping: 0 running", ticket: newer, onlyIfChanged: false) == "stopping: 0 running")
        #expect(sequence.admit("1 running", ticket: older, onlyIfChanged: true) == nil)
        #expect(sequence.admit("1 running", ticket: older, onlyIfChanged: false) == nil)
        #expect(sequence.lastText == "stopping: 0 running")
    }

    @Test func snapshotsOfferedInOrderAreAllSent() {
        var sequence = StatusSequence()
        let first = sequence.ticket()
        let second = sequence.ticket()
        #expect(first < second)
        #expect(sequence.admit("1 running", ticket: first, onlyIfChanged: true) == "1 running")
        #expect(sequence.admit("0 running", ticket: second, onlyIfChanged: true) == "0 running")
        #expect(sequence.lastText == "0 running")
    }

    @Test func anUnchangedLineIsSentOnlyWhenAsked() {
        var sequence = StatusSequence()
        #expect(sequence.admit("1 running", ticket: sequence.ticket(), onlyIfChanged: true) == "1 running")
        #expect(sequence.admit("1 running", ticket: sequence.ticket(), onlyIfChanged: true) == nil)
        // READY=1 after a reload carries the line even when it did not change.
        #expect(sequence.admit("1 running", ticket: sequence.ticket(), onlyIfChanged: false) == "1 running")
    }

    @Test func aTicketRefusedForBeingUnchangedDoesNotBlockANewerOne() {
        var sequence = StatusSequence()
        let first = sequence.ticket()
        #expect(sequence.admit("a", ticket: first, onlyIfChanged: true) == "a")
        let second = sequence.ticket()
        let third = sequence.ticket()
        #expect(sequence.admit("a", ticket: second, onlyIfChanged: true) == nil)
        #expect(sequence.admit("b", ticket: third, onlyIfChanged: true) == "b")
        #expect(sequence.admit("a", ticket: second, onlyIfChanged: false) == nil)
    }
}

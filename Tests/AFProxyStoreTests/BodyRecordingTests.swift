import AFProxyModel
import Testing

@testable import AFProxyStore

/// What of each chunk a recording keeps, and when it stops, without a disk.
@Suite struct BodyRecordingTests {
    @Test func chunksAreKeptUpToTheLimitThenTheBodyIsCut() {
        var recording = BodyRecording(rule: 3, limit: 10)
        #expect(recording.arrived(4) == 4)
        #expect(recording.arrived(4) == 4)
        #expect(recording.arrived(4) == 2)  // the first two of these, the rest cut
        #expect(recording.arrived(4) == 0)
        #expect(recording.body == RecordedBody(rule: 3, size: 10, seen: 16, cut: true, cutBy: "limit"))
        recording.wrote(10)
        #expect(recording.unwritten == 0 && recording.written == 10)
    }

    @Test func aBodyOfExactlyTheLimitIsWhole() {
        var recording = BodyRecording(rule: 1, limit: 8)
        #expect(recording.arrived(8) == 8)
        #expect(recording.arrived(0) == 0)
        #expect(recording.body.cut == false && recording.body.size == 8)
    }

    @Test func aDiskThatFallsBehindCutsTheBodyRatherThanHoldingIt() {
        let limit = BodyRecording.unwrittenLimit * 4
        var recording = BodyRecording(rule: 1, limit: limit)
        let chunk = Int(BodyRecording.unwrittenLimit / 2)
        #expect(recording.arrived(chunk) == chunk)
        #expect(recording.arrived(chunk) == chunk)
        #expect(recording.arrived(1) == 0)  // nothing written yet: a third chunk would pass the bound
        #expect(recording.body.cut && recording.body.cutBy == "disk")
        #expect(recording.arrived(chunk) == 0)  // and nothing more after
    }

    @Test func aFailedWriteLeavesWhatWasWritten() {
        var recording = BodyRecording(rule: 1, limit: 100)
        _ = recording.arrived(30)
        recording.wrote(30)
        _ = recording.arrived(20)
        recording.failed(unwritten: 20)
        #expect(recording.body == RecordedBody(rule: 1, size: 30, seen: 50, cut: true, cutBy: "disk"))
        #expect(recording.arrived(10) == 0)
    }

    @Test func writesQueuedAfterAFailedOneAreDroppedAndTheSizeStays() {
        var recording = BodyRecording(rule: 1, limit: 100)
        _ = recording.arrived(30)
        _ = recording.arrived(20)
        _ = recording.arrived(10)
        recording.wrote(30)
        recording.failed(unwritten: 20)
        #expect(recording.writesFailed)
        recording.dropped(10)  // it would fit in the room the failed write gave back: not made
        #expect(recording.body.size == 30 && recording.unwritten == 0 && recording.written == 30)
        recording.restart()
        #expect(!recording.writesFailed)  // the new body's file starts empty: its writes are made
    }

    @Test func aChunkRefusedRoomIsCutWhileTheQueuedOnesStillCount() {
        var recording = BodyRecording(rule: 1, limit: 100)
        #expect(recording.arrived(30) == 30)  // queued, lands later
        #expect(recording.arrived(20) == 20)
        recording.refused(20)  // no room to wait across the store: never queued
        #expect(recording.body == RecordedBody(rule: 1, size: 30, seen: 50, cut: true, cutBy: "disk"))
        #expect(!recording.writesFailed)
        recording.wrote(30)
        #expect(recording.body.size == recording.written && recording.unwritten == 0)
    }

    @Test func aRemovedBodyHasNothingLeft() {
        var recording = BodyRecording(rule: 1, limit: 100)
        _ = recording.arrived(30)
        recording.wrote(30)
        recording.removed()
        #expect(recording.body.size == 0 && recording.body.cutBy == "total")
    }
}

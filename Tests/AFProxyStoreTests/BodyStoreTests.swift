import AFProxyModel
import AFProxyTestSupport
import FoundationEssentials
import NIOCore
import Testing

@testable import AFProxyStore

/// The store on a real directory: the total removes the oldest body first, a replaced body holds
/// only its new bytes, and a restarted recording counts from nothing.
@Suite struct BodyStoreTests {
    @Test func theTotalRemovesTheOldestFirst() throws {
        let scratch = TemporaryDirectory("bodies")
        let store = BodyStore(directory: scratch.path + "/bodies", maxTotal: 10)
        for task in 1...3 {
            store.recorder(task: task, side: .response, rule: 1, limit: 100).append(ByteBuffer(string: "abcd"))
        }
        #expect(try store.contents(task: 3, side: .response) == Data("abcd".utf8))  // waits for the writes
        #expect(store.wasRemoved(task: 1, side: .response))
        #expect(!store.wasRemoved(task: 2, side: .response) && !store.wasRemoved(task: 3, side: .response))
        #expect(try store.contents(task: 1, side: .response) == nil)
        #expect(store.usage.bodies == 2 && store.usage.bytes == 8)
    }

    @Test func aReplacedBodyHoldsOnlyItsNewBytes() throws {
        let scratch = TemporaryDirectory("bodies")
        let store = BodyStore(directory: scratch.path + "/bodies")
        let recorder = store.recorder(task: 7, side: .request, rule: 2, limit: 100)
        recorder.append(ByteBuffer(string: "the client's"))
        recorder.replace(with: ByteBuffer(string: "edited"))
        #expect(try store.contents(task: 7, side: .request) == Data("edited".utf8))
        #expect(recorder.recorded == RecordedBody(rule: 2, size: 6, seen: 6))
        #expect(store.usage.bytes == 6)
    }

    @Test func aRestartedRecordingCountsFromNothing() {
        var recording = BodyRecording(rule: 1, limit: 10)
        #expect(recording.arrived(8) == 8)
        recording.restart()
        #expect(recording.arrived(4) == 4)
        recording.wroteBeforeRestart(8)
        recording.wrote(4)
        #expect(recording.body == RecordedBody(rule: 1, size: 4, seen: 4))
        #expect(recording.unwritten == 0 && recording.written == 4)
    }

    /// Many chunks queued at once are written together, in order, through one open file, which
    /// is closed once its recorder goes; a restart among them empties the file where it stood.
    @Test func queuedChunksLandInOrderAndTheFileClosesWithItsRecorder() throws {
        let scratch = TemporaryDirectory("bodies")
        let store = BodyStore(directory: scratch.path + "/bodies")
        var expected = ""
        do {
            let recorder = store.recorder(task: 9, side: .response, rule: 1, limit: 1 << 20)
            for index in 0..<2000 {
                recorder.append(ByteBuffer(string: "\(index),"))
                if index == 999 { recorder.replace(with: ByteBuffer(string: "[")) }
                if index >= 999 { expected += index == 999 ? "[" : "\(index)," }
            }
            #expect(try store.contents(task: 9, side: .response) == Data(expected.utf8))
            #expect(
                recorder.recorded
                    == RecordedBody(rule: 1, size: Int64(expected.utf8.count), seen: Int64(expected.utf8.count)))
            #expect(store.openFiles == 1)
        }
        _ = try store.contents(task: 9, side: .response)  // after the close the recorder's end queued
        #expect(store.openFiles == 0)
        #expect(store.usage.bytes == Int64(expected.utf8.count))
    }

    /// A body removed to keep the total is not made again by a write queued before its removal.
    @Test func aRemovedBodyIsNotWrittenAgain() throws {
        let scratch = TemporaryDirectory("bodies")
        let store = BodyStore(directory: scratch.path + "/bodies", maxTotal: 8)
        let first = store.recorder(task: 1, side: .response, rule: 1, limit: 100)
        first.append(ByteBuffer(string: "abcd"))
        store.recorder(task: 2, side: .response, rule: 1, limit: 100).append(ByteBuffer(string: "efghijkl"))
        first.append(ByteBuffer(string: "mn"))
        #expect(try store.contents(task: 1, side: .response) == nil)
        #expect(first.recorded.cut && first.recorded.cutBy == "total" && first.recorded.size == 0)
        #expect(store.usage.bodies == 1 && store.usage.bytes == 8)
    }

    /// A write that fails stops the body where its file stands, and the store remembers the size
    /// for the record its task made on completing, which may count bytes that were still waiting.
    @Test func aFailedWriteStopsTheBodyAndTheStoreRemembersItsSize() throws {
        let scratch = TemporaryDirectory("bodies")
        let store = BodyStore(directory: scratch.path + "/bodies", maxTotal: 8)
        let recorder = store.recorder(task: 1, side: .response, rule: 1, limit: 100)
        recorder.append(ByteBuffer(string: "abcd"))
        _ = try store.contents(task: 1, side: .response)
        recorder.append(ByteBuffer(string: "efghijkl"))  // alone past the total: not written
        #expect(try store.contents(task: 1, side: .response) == Data("abcd".utf8))
        #expect(recorder.recorded == RecordedBody(rule: 1, size: 4, seen: 12, cut: true, cutBy: "disk"))
        #expect(store.change(task: 1, side: .response) == .failed(size: 4))
        recorder.append(ByteBuffer(string: "mn"))  // it would fit now; the body is cut
        #expect(try store.contents(task: 1, side: .response) == Data("abcd".utf8))
    }

    /// A disk that refuses the bytes (`/dev/full`: ENOSPC) leaves the body cut at what it held.
    @Test func aFullDiskCutsTheBody() throws {
        let scratch = TemporaryDirectory("bodies")
        let directory = scratch.path + "/bodies"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = BodyStore(directory: directory)
        let path = store.path(task: 2, side: .response)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/full")
        let recorder = store.recorder(task: 2, side: .response, rule: 1, limit: 100)
        recorder.append(ByteBuffer(string: "refused"))
        #expect(try store.contents(task: 3, side: .response) == nil)  // after the write: one lane
        #expect(recorder.recorded == RecordedBody(rule: 1, size: 0, seen: 7, cut: true, cutBy: "disk"))
        #expect(store.change(task: 2, side: .response) == .failed(size: 0))
    }
}

import NIOCore
import Testing

@testable import AFProxyManager

/// The request body between the client and curl: bytes in order across chunk boundaries, the
/// high watermark that stops reading the client, and the replay of what curl already took.
@Suite struct UploadQueueTests {
    /// Drains at most `count` bytes, as curl's read callback does with its buffer.
    private func drain(_ queue: inout UploadQueue, _ count: Int) -> String {
        var target = [UInt8](repeating: 0, count: count)
        let copied = target.withUnsafeMutableBytes { queue.drain(into: $0) }
        return String(decoding: target[..<copied], as: UTF8.self)
    }

    /// `#expect` cannot call a mutating method on its operand: these wrap the two that answer.
    private func append(_ queue: inout UploadQueue, _ buffer: ByteBuffer) -> Bool {
        queue.append(buffer)
    }

    private func rewind(_ queue: inout UploadQueue) -> Int? {
        queue.rewind()
    }

    private func buffer(_ text: String) -> ByteBuffer {
        ByteBuffer(string: text)
    }

    private func buffer(count: Int) -> ByteBuffer {
        ByteBuffer(repeating: UInt8(ascii: "x"), count: count)
    }

    @Test func startsEmptyAndNotEnded() {
        var queue = UploadQueue()
        #expect(queue.bytes == 0)
        #expect(!queue.ended && !queue.curlWaiting && !queue.readerStopped)
        #expect(self.drain(&queue, 16) == "")
    }

    @Test func bytesComeOutInOrderAcrossChunkBoundaries() {
        var queue = UploadQueue()
        #expect(self.append(&queue, self.buffer("hello ")))
        #expect(self.append(&queue, self.buffer("upload ")))
        #expect(self.append(&queue, self.buffer("world")))
        #expect(queue.bytes == 18)
        #expect(self.drain(&queue, 4) == "hell")  // inside the first chunk
        #expect(queue.bytes == 14)
        #expect(self.drain(&queue, 7) == "o uploa")  // across the first boundary
        #expect(self.drain(&queue, 100) == "d world")  // the rest, fewer than asked
        #expect(queue.bytes == 0)
        #expect(self.drain(&queue, 100) == "")
    }

    @Test func aBufferReadFromTheMiddleGivesOnlyItsReadableBytes() {
        var queue = UploadQueue()
        var partly = self.buffer("skipped:kept")
        partly.moveReaderIndex(forwardBy: 8)
        #expect(self.append(&queue, partly))
        #expect(queue.bytes == 4)
        #expect(self.drain(&queue, 100) == "kept")
    }

    @Test func anEmptyAppendChangesNothing() {
        var queue = UploadQueue()
        #expect(self.append(&queue, ByteBuffer()))
        #expect(queue.bytes == 0)
        #expect(self.append(&queue, self.buffer("a")))
        #expect(self.append(&queue, ByteBuffer()))
        #expect(self.drain(&queue, 8) == "a")
    }

    /// Past the high watermark the client is not read; draining does not resume it by itself
    /// (the task delegate does, below the low watermark).
    @Test func reachingTheHighWatermarkStopsTheReader() {
        var queue = UploadQueue()
        #expect(self.append(&queue, self.buffer(count: UploadQueue.highWatermark - 1)))
        #expect(!queue.readerStopped)
        #expect(!self.append(&queue, self.buffer(count: 1)))
        #expect(queue.readerStopped)
        #expect(queue.bytes == UploadQueue.highWatermark)
        #expect(!self.append(&queue, self.buffer(count: 10)))  // what still arrives is kept, not dropped
        #expect(queue.bytes == UploadQueue.highWatermark + 10)

        var target = [UInt8](repeating: 0, count: UploadQueue.highWatermark)
        let copied = target.withUnsafeMutableBytes { queue.drain(into: $0) }
        #expect(copied == UploadQueue.highWatermark)
        #expect(queue.bytes == 10)
        #expect(queue.readerStopped)
        #expect(queue.bytes < UploadQueue.lowWatermark)  // where the delegate lets the reader go on
        queue.readerStopped = false
        #expect(self.append(&queue, self.buffer(count: 1)))
    }

    @Test func rewindPutsWhatCurlTookBackInFront() {
        var queue = UploadQueue()
        _ = queue.append(self.buffer("abcdef"))
        _ = queue.append(self.buffer("ghij"))
        #expect(self.drain(&queue, 3) == "abc")
        #expect(self.drain(&queue, 5) == "defgh")
        #expect(self.rewind(&queue) == 8)
        #expect(queue.bytes == 10)
        #expect(self.drain(&queue, 100) == "abcdefghij")
    }

    @Test func aSecondRewindReplaysFromTheStartAgain() {
        var queue = UploadQueue()
        _ = queue.append(self.buffer("0123456789"))
        #expect(self.drain(&queue, 4) == "0123")
        #expect(self.rewind(&queue) == 4)
        #expect(self.drain(&queue, 6) == "012345")
        #expect(self.rewind(&queue) == 6)
        #expect(queue.bytes == 10)
        #expect(self.drain(&queue, 100) == "0123456789")
    }

    @Test func rewindBeforeAnythingWasTakenPutsBackNothing() {
        var queue = UploadQueue()
        _ = queue.append(self.buffer("body"))
        #expect(self.rewind(&queue) == 0)
        #expect(self.drain(&queue, 100) == "body")
    }

    @Test func upToTheReplayLimitCanBeRewound() {
        var queue = UploadQueue()
        _ = queue.append(self.buffer(count: UploadQueue.replayLimit + 1))
        var target = [UInt8](repeating: 0, count: UploadQueue.replayLimit)
        let copied = target.withUnsafeMutableBytes { queue.drain(into: $0) }
        #expect(copied == UploadQueue.replayLimit)
        #expect(self.rewind(&queue) == UploadQueue.replayLimit)
        #expect(queue.bytes == UploadQueue.replayLimit + 1)
    }

    @Test func pastTheReplayLimitTheSentBytesAreGone() {
        var queue = UploadQueue()
        _ = queue.append(self.buffer(count: UploadQueue.replayLimit))
        _ = queue.append(self.buffer("tail"))
        var target = [UInt8](repeating: 0, count: UploadQueue.replayLimit)
        _ = target.withUnsafeMutableBytes { queue.drain(into: $0) }
        #expect(self.drain(&queue, 1) == "t")  // one byte past the limit
        #expect(self.rewind(&queue) == nil)
        #expect(queue.bytes == 3)
        #expect(self.drain(&queue, 100) == "ail")  // the queue itself is untouched
        #expect(self.rewind(&queue) == nil)  // and stays unable to replay
    }

    @Test func onceTheResponseBeganNothingIsReplayed() {
        var queue = UploadQueue()
        _ = queue.append(self.buffer("abcdef"))
        #expect(self.drain(&queue, 2) == "ab")
        queue.forgetSent()
        #expect(self.rewind(&queue) == nil)
        #expect(self.drain(&queue, 2) == "cd")
        #expect(self.rewind(&queue) == nil)  // later drains are not recorded either
        #expect(queue.bytes == 2)
        #expect(self.drain(&queue, 100) == "ef")
    }

    @Test func theEndIsAFlagBesideTheBytes() {
        var queue = UploadQueue()
        _ = queue.append(self.buffer("last"))
        queue.ended = true
        #expect(queue.bytes == 4)  // ending does not drop what waits
        #expect(self.drain(&queue, 100) == "last")
        #expect(queue.ended)
        #expect(self.rewind(&queue) == 4)  // nor does it stop a replay
        #expect(self.drain(&queue, 100) == "last")
    }
}

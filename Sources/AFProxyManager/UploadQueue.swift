import NIOCore

/// Request body bytes received from the client and not yet taken by curl. Filled on the client's
/// event loop, drained on the session thread, under the delegate's lock; bounded by a high
/// watermark past which the client is not read, so memory per upload stays small.
struct UploadQueue {
    static let highWatermark = 1 << 20
    static let lowWatermark = 256 << 10

    private var chunks = CircularBuffer<ByteBuffer>(initialCapacity: 4)
    private(set) var bytes = 0
    var ended = false
    /// curl asked for bytes and got none: it is paused until we say there are some.
    var curlWaiting = false
    /// The client is not being read because the queue was full.
    var readerStopped = false
    /// What curl took so far, while that is at most `replayLimit`: curl sends a request again on
    /// a fresh connection when a reused one turns out dead as it sends (an origin closing an
    /// idle connection races the request), and for a request with a body it must rewind. Kept
    /// until the response starts; nil once more went out or the response began.
    private var sent: [ByteBuffer]? = []
    private var sentBytes = 0
    static let replayLimit = 64 << 10

    /// Answers whether the client may be read further.
    mutating func append(_ buffer: ByteBuffer) -> Bool {
        guard buffer.readableBytes > 0 else { return true }
        self.chunks.append(buffer)
        self.bytes += buffer.readableBytes
        if self.bytes >= Self.highWatermark { self.readerStopped = true }
        return !self.readerStopped
    }

    /// Copies up to `target.count` bytes into `target`, answering how many.
    mutating func drain(into target: UnsafeMutableRawBufferPointer) -> Int {
        var copied = 0
        while copied < target.count, var chunk = self.chunks.first {
            let count = min(chunk.readableBytes, target.count - copied)
            if self.sent != nil {
                self.sentBytes += count
                if self.sentBytes <= Self.replayLimit {
                    self.sent!.append(chunk.getSlice(at: chunk.readerIndex, length: count)!)
                } else {
                    self.sent = nil
                }
            }
            chunk.withUnsafeReadableBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: target[copied..<(copied + count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<count]))
            }
            chunk.moveReaderIndex(forwardBy: count)
            copied += count
            if chunk.readableBytes == 0 {
                self.chunks.removeFirst()
            } else {
                self.chunks[self.chunks.startIndex] = chunk
            }
        }
        self.bytes -= copied
        return copied
    }

    /// Puts what curl took back in front, for sending again from the start. Answers how many
    /// bytes went back, or nil when they are gone (more than `replayLimit`, or the response began).
    mutating func rewind() -> Int? {
        guard let sent = self.sent else { return nil }
        for chunk in sent.reversed() { self.chunks.prepend(chunk) }
        let count = self.sentBytes
        self.bytes += count
        self.sent = []
        self.sentBytes = 0
        return count
    }

    /// The response began: curl will not send the request again.
    mutating func forgetSent() {
        self.sent = nil
        self.sentBytes = 0
    }
}

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
}

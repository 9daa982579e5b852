import NIOCore
import NIOHTTP1

/// The body of a streaming answer, one JSON value a line, for the feed handler that owns it
/// (`NDJSONFeedHandler`). It keeps no context: its handler passes its own on
/// each call. Used on the connection's event loop only.
final class NDJSONWriter {
    /// False once the stream ended or its connection closed: nothing more is written.
    private(set) var isOpen = true
    /// One flush for the lines written in one turn of the event loop: a flush per line was a
    /// writev per line, as much CPU as encoding the events.
    private var flushScheduled = false

    func write(_ json: [UInt8], context: ChannelHandlerContext) {
        guard self.isOpen else { return }
        var buffer = context.channel.allocator.buffer(capacity: json.count + 1)
        buffer.writeBytes(json)
        buffer.writeString("\n")
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
        guard !self.flushScheduled else { return }
        self.flushScheduled = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (writer, context) = loopBound.value
            writer.flushScheduled = false
            if writer.isOpen { context.flush() }
        }
    }

    /// Ends the answer with its last chunk, so that its reader tells a clean stop from a broken
    /// connection, then closes the connection.
    func end(context: ChannelHandlerContext) {
        guard self.isOpen else { return }
        self.isOpen = false
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete {
            [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }

    /// The connection closed: nothing more can be written.
    func close() {
        self.isOpen = false
    }
}

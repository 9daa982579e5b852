import AFProxyModel
import NIOCore
import NIOHTTP1

/// Writes a proxy client connection's responses as bytes, in place of NIO's `HTTPResponseEncoder`,
/// which writes every string as UTF-8: an origin's field value or reason phrase holding bytes that
/// are not UTF-8 (obs-text, RFC 9110 §5.5) reached the client changed. Here a head is written as
/// the bytes it stands for (`FieldText`), and body parts go out as they are: the connection
/// handler frames each body itself (`ClientResponseHead.Framing`), so nothing here looks at
/// `Transfer-Encoding`, and `.end` adds no bytes (a last-chunk and trailers were written before).
final class ClientResponseEncoder: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = IOData

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch Self.unwrapOutboundIn(data) {
        case .head(let head):
            var buffer = context.channel.allocator.buffer(capacity: 256)
            Self.write(head, into: &buffer)
            context.write(Self.wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
        case .body(let body):
            context.write(Self.wrapOutboundOut(body), promise: promise)
        case .end:
            // An empty write keeps the promise in order behind the body's.
            context.write(
                Self.wrapOutboundOut(.byteBuffer(context.channel.allocator.buffer(capacity: 0))), promise: promise)
        }
    }

    static func write(_ head: HTTPResponseHead, into buffer: inout ByteBuffer) {
        buffer.writeString("HTTP/\(head.version.major).\(head.version.minor) \(head.status.code) ")
        FieldText.encode(head.status.reasonPhrase) { buffer.writeBytes($0) }
        buffer.writeString("\r\n")
        for (name, value) in head.headers {
            buffer.writeString(name)
            buffer.writeString(": ")
            FieldText.encode(value) { buffer.writeBytes($0) }
            buffer.writeString("\r\n")
        }
        buffer.writeString("\r\n")
    }
}

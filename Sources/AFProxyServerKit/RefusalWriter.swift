import NIOCore
import NIOHTTP1

/// Writes an answer a server gives on its own (a refusal, a timeout) either as raw bytes, for a
/// handler in front of the HTTP codec or on a connection without one, or through the HTTP encoder
/// and then closes the connection. The servers differ in what the answer says (plain text with
/// `Via` for the proxy, the API's JSON error for the control socket), not in how it is written.
package enum RefusalWriter {
    /// `head` and `body` as the bytes of an HTTP/1 response; `head`'s fields frame the body.
    package static func bytes(head: HTTPResponseHead, body: ByteBuffer) -> ByteBuffer {
        var text =
            "HTTP/\(head.version.major).\(head.version.minor) \(head.status.code) \(head.status.reasonPhrase)\r\n"
        for (name, value) in head.headers { text += "\(name): \(value)\r\n" }
        var buffer = ByteBuffer(string: text + "\r\n")
        buffer.writeImmutableBuffer(body)
        return buffer
    }

    /// Writes the answer through the HTTP encoder, then closes the connection once it is written.
    package static func send(head: HTTPResponseHead, body: ByteBuffer, on context: ChannelHandlerContext) {
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }
}

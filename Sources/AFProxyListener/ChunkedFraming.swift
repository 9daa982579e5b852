import AFProxyModel
import NIOCore

/// Chunked framing written by hand for the one case NIO's encoder does not chunk: a response
/// whose `Transfer-Encoding` names codings before chunked (RFC 9112 §7.1).
enum ChunkedFraming {
    /// `body` as one chunk: size line, data, CRLF.
    static func chunk(_ body: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        guard body.readableBytes > 0 else { return body }  // a zero-size chunk would end the body
        var framed = allocator.buffer(capacity: body.readableBytes + 20)
        framed.writeString(String(body.readableBytes, radix: 16) + "\r\n")
        framed.writeImmutableBuffer(body)
        framed.writeString("\r\n")
        return framed
    }

    /// The last chunk with the trailer section and the final CRLF.
    static func last(trailers: HTTPHeaderList, allocator: ByteBufferAllocator) -> ByteBuffer {
        var framed = allocator.buffer(capacity: 64)
        framed.writeString("0\r\n")
        for field in trailers { framed.writeString("\(field.name): \(field.value)\r\n") }
        framed.writeString("\r\n")
        return framed
    }
}

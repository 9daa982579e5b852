import AFProxyModel
import NIOCore

/// The chunked framing of a response body to a client (RFC 9112 §7.1), written by the connection
/// handler for every chunked response, whatever codings come before `chunked`.
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
        for field in trailers {
            framed.writeString(field.name)
            framed.writeString(": ")
            FieldText.encode(field.value) { framed.writeBytes($0) }
            framed.writeString("\r\n")
        }
        framed.writeString("\r\n")
        return framed
    }
}

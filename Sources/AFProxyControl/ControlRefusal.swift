import AFProxyAPI
import AFProxyModel
import AFProxyServerKit
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// An answer the control socket gives on its own when a connection or request breaks a limit or
/// cannot be parsed: the API's error shape (`{"error": "..."}`, JSON, one line), a `Date`, and
/// `Connection: close`, since after any of them the connection is not worth keeping (its framing
/// is in doubt, or the client is not sending what it should).
struct ControlRefusal: Equatable {
    /// 413 under RFC 9110's name; NIO still spells it "Payload Too Large" (RFC 7231).
    static let contentTooLarge = HTTPResponseStatus.custom(code: 413, reasonPhrase: "Content Too Large")

    var status: HTTPResponseStatus
    var message: String

    init(_ status: HTTPResponseStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    func response(version: HTTPVersion = .http1_1) -> (HTTPResponseHead, ByteBuffer) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var body = ByteBuffer()
        if let json = try? encoder.encode(ControlErrorBody(error: self.message)) {
            body.writeBytes(json)
        } else {
            body.writeString(#"{"error":"refused"}"#)
        }
        body.writeString("\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Date", value: HTTPDate.now())
        headers.add(name: "Connection", value: "close")
        return (HTTPResponseHead(version: version, status: self.status, headers: headers), body)
    }

    /// The same answer as bytes, for handlers in front of the HTTP encoder.
    func bytes() -> ByteBuffer {
        let (head, body) = self.response()
        return RefusalWriter.bytes(head: head, body: body)
    }

    /// Writes the answer through the HTTP encoder, then closes the connection once it is written.
    func send(on context: ChannelHandlerContext, version: HTTPVersion) {
        let (head, body) = self.response(version: version)
        RefusalWriter.send(head: head, body: body, on: context)
    }
}

import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AFProxyServerKit

@Suite struct RefusalWriterTests {
    private func head(_ version: HTTPVersion) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "3")
        headers.add(name: "Connection", value: "close")
        return HTTPResponseHead(version: version, status: .serviceUnavailable, headers: headers)
    }

    @Test func bytesAreTheStatusLineTheFieldsInOrderAndTheBody() {
        let bytes = RefusalWriter.bytes(head: self.head(.http1_0), body: ByteBuffer(string: "no\n"))
        #expect(
            String(buffer: bytes)
                == "HTTP/1.0 503 Service Unavailable\r\nContent-Length: 3\r\nConnection: close\r\n\r\nno\n")
    }

    @Test func sendWritesThroughTheEncoderThenCloses() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTPResponseEncoder())
        let handler = Sender(head: self.head(.http1_1))
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        var written = ""
        while let part = try channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = part { written += String(buffer: buffer) }
        }
        #expect(written.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(written.hasSuffix("\r\n\r\nno\n"))
        #expect(!channel.isActive)
    }
}

/// Sends the answer as soon as the channel is active.
private final class Sender: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    let head: HTTPResponseHead

    init(head: HTTPResponseHead) { self.head = head }

    func channelActive(context: ChannelHandlerContext) {
        RefusalWriter.send(head: self.head, body: ByteBuffer(string: "no\n"), on: context)
    }
}

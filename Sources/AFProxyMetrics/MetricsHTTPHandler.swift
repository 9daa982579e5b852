import NIOCore
import NIOHTTP1

/// One connection to the `metrics-listen` port: `GET /metrics` (any query) answers the text
/// format, every other request 404. Keep-alive as the client asks, as Prometheus reuses its
/// connection between scrapes; a connection idle past its `IdleStateHandler` time is closed.
final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let exposition: @Sendable () -> [UInt8]
    private var request: HTTPRequestHead?

    init(exposition: @escaping @Sendable () -> [UInt8]) {
        self.exposition = exposition
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.request = head
        case .body:
            break
        case .end:
            guard let head = self.request else { return }
            self.request = nil
            self.respond(to: head, context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    static func isMetrics(_ head: HTTPRequestHead) -> Bool {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return head.method == .GET && path == "/metrics"
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        var body = ByteBuffer()
        let status: HTTPResponseStatus
        if Self.isMetrics(head) {
            status = .ok
            body.writeBytes(self.exposition())
            headers.add(name: "Content-Type", value: DaemonMetrics.contentType)
        } else {
            status = .notFound
            body.writeString("only GET /metrics is served here\n")
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let done = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if !head.isKeepAlive {
            done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }
}

import NIOCore
import NIOHTTP1

/// Answers what the HTTP parser rejects, then closes: 431 when the header section is too large,
/// 400 for everything else (malformed request line or fields, invalid or conflicting framing, which
/// is also where request smuggling attempts end). Shaped like NIO's
/// `HTTPServerProtocolErrorHandler`, which answers 400 to everything.
final class ProxyErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let via: String
    private var hasUnterminatedResponse = false

    init(via: String) {
        self.via = via
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if !self.hasUnterminatedResponse {
            let refusal: ProxyRefusal
            switch parserError {
            case .headerOverflow:
                refusal = ProxyRefusal(.requestHeaderFieldsTooLarge, "the request header section is too large")
            case .invalidContentLength, .unexpectedContentLength:
                refusal = ProxyRefusal(.badRequest, "invalid or conflicting message framing (\(parserError))")
            default:
                refusal = ProxyRefusal(.badRequest, "malformed request (\(parserError))")
            }
            let (head, body) = refusal.response(version: .http1_1, via: self.via)
            context.write(self.wrapOutboundOut(.head(head)), promise: nil)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
            context.writeAndFlush(self.wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        } else {
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch self.unwrapOutboundIn(data) {
        case .head(let head) where (100..<200).contains(head.status.code) && head.status.code != 101:
            break
        case .head:
            self.hasUnterminatedResponse = true
        case .body:
            break
        case .end:
            self.hasUnterminatedResponse = false
        }
        context.write(data, promise: promise)
    }
}

import NIOCore
import NIOHTTP1

/// Answers what the HTTP parser rejects, then closes: 431 when the request head is over its limit
/// (the decoder's `headerOverflow`), 400 for anything else malformed. Without it the connection
/// closed with no answer. While an answer is under way (the event stream) the error cannot be
/// answered in HTTP, so the connection just closes. Shaped like the proxy port's error handler.
final class ControlParserErrorHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let maxHeaderBytes: Int
    private var hasUnterminatedResponse = false
    private var answered = false

    init(maxHeaderBytes: Int = ControlLimits.maxHeaderBytes) {
        self.maxHeaderBytes = maxHeaderBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.answered else { return }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // Once answered, the decoder's further complaints (bytes after its error) change nothing.
        guard !self.answered else { return }
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        self.answered = true
        guard !self.hasUnterminatedResponse else {
            context.close(promise: nil)
            return
        }
        let refusal: ControlRefusal
        switch parserError {
        case .headerOverflow:
            refusal = ControlRefusal(
                .requestHeaderFieldsTooLarge, "the request head is over \(self.maxHeaderBytes) bytes")
        default:
            refusal = ControlRefusal(.badRequest, "malformed request (\(parserError))")
        }
        refusal.send(on: context, version: .http1_1)
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

import NIOCore
import NIOHTTP1

/// Turns what the HTTP parser rejects into a refusal that travels inbound, in order, behind the
/// requests parsed before it: 431 when the header section is too large, 400 for everything else
/// (malformed request line or fields, invalid or conflicting framing, which is also where request
/// smuggling attempts end). The connection handler answers it once the requests before it were
/// answered, then closes: a valid request followed in the same packet by a malformed one gets its
/// own response first (answering at once lost it, and cut its upstream request off).
final class ProxyErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The inbound event carrying the refusal.
    struct MalformedRequest: Sendable {
        var refusal: ProxyRefusal
    }

    private var failed = false

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let parserError = error as? HTTPParserError {
            guard !self.failed else { return }
            self.failed = true
            context.fireUserInboundEventTriggered(MalformedRequest(refusal: Self.refusal(for: parserError)))
            return
        }
        if self.failed, case ByteToMessageDecoderError.dataReceivedInErrorState = error {
            return  // bytes behind the malformed request: nothing after it can be parsed
        }
        context.fireErrorCaught(error)
    }

    static func refusal(for error: HTTPParserError) -> ProxyRefusal {
        switch error {
        case .headerOverflow:
            ProxyRefusal(.requestHeaderFieldsTooLarge, "the request header section is too large")
        case .invalidContentLength, .unexpectedContentLength:
            ProxyRefusal(.badRequest, "invalid or conflicting message framing (\(error))")
        default:
            ProxyRefusal(.badRequest, "malformed request (\(error))")
        }
    }
}

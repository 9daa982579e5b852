import NIOCore
import NIOHTTP1

/// Adds the web port's protective header fields to every answer, the page's and the API's alike:
/// the page may run only its own script and style and talk only to its own origin (CSP: the page
/// sets its own, with the nonce of its inline script; every other answer gets this one), no
/// other page may frame it, nothing is cached (the answers are live, and the entry URL holds the
/// token), and no content type is guessed.
final class WebHeadersHandler: ChannelOutboundHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    static let contentSecurityPolicy =
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
        + "frame-ancestors 'none'"

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = self.unwrapOutboundIn(data) else {
            return context.write(data, promise: promise)
        }
        head.headers.replaceOrAdd(name: "Cache-Control", value: "no-store")
        head.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        if !head.headers.contains(name: "Content-Security-Policy") {
            head.headers.add(name: "Content-Security-Policy", value: Self.contentSecurityPolicy)
        }
        head.headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
        head.headers.replaceOrAdd(name: "Referrer-Policy", value: "no-referrer")
        head.headers.replaceOrAdd(name: "Cross-Origin-Resource-Policy", value: "same-origin")
        context.write(self.wrapOutboundOut(.head(head)), promise: promise)
    }
}

import NIOCore
import NIOHTTP1

/// Tells the request decoder when the request it just parsed asked for a protocol upgrade the
/// way llhttp recognises one and the proxy declines it, so that parsing goes on after it
/// (`RequestDecoder.upgradeDeclined`).
/// It sits right behind the decoder: the parser passes `.end` on inside its own decode call,
/// which is where the decoder must learn it.
final class UpgradeDeclineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let decoder: RequestDecoder
    private var upgradeAsked = false

    init(decoder: RequestDecoder) {
        self.decoder = decoder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            // A WebSocket handshake is not declined: the connection becomes its tunnel.
            self.upgradeAsked =
                head.method != .CONNECT && Self.asksForUpgrade(head.headers)
                && !RequestValidator.asksForWebSocket(head)
        case .body:
            break
        case .end:
            if self.upgradeAsked { self.decoder.upgradeDeclined() }
            self.upgradeAsked = false
        }
        context.fireChannelRead(data)
    }

    /// llhttp's rule (`llhttp__before_headers_complete`): an `Upgrade` field together with the
    /// `upgrade` token in `Connection`. A CONNECT is an upgrade too, but the tunnel takes the
    /// bytes after it, and stopping there is right.
    static func asksForUpgrade(_ headers: HTTPHeaders) -> Bool {
        headers.contains(name: "upgrade")
            && headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
    }
}

import AFProxyModel
import AFProxyRules
import NIOCore
import NIOHTTP1
import NIOPosix

/// Checks new proxy credentials before their request reaches `ProxyConnectionHandler`. A
/// password hash takes tens of milliseconds by design, far too long for an event loop: a head
/// with credentials not verified before is held here, with what follows it and the
/// connection's reads, while NIO's thread pool verifies them; then it goes on, and the
/// validator's cheap verdict (cached success, or 407) decides. A failed check is passed on only
/// after `failureDelay`, which slows guessing on one connection down.
///
/// Part of the client codec (`ClientCodec`) when `proxy-auth-file` is set; a CONNECT's takeover
/// removes it with the HTTP handlers.
final class ProxyAuthGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    static let challenge = "Basic realm=\"afproxy\""
    static let failureDelay = TimeAmount.milliseconds(300)

    private let authenticator: ProxyAuthenticator
    private var context: ChannelHandlerContext?
    /// Parts held while credentials are verified, the head that carries them first.
    private var held = CircularBuffer<HTTPServerRequestPart>()
    private var verifying = false
    private var readWanted = false

    init(authenticator: ProxyAuthenticator) {
        self.authenticator = authenticator
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Only a closing connection removes a gate that holds parts (an idle codec is shed
        // with nothing held, a CONNECT after its head went on): they go with it.
        self.context = nil
        self.held.removeAll()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.pass(self.unwrapInboundIn(data), context: context)
    }

    func read(context: ChannelHandlerContext) {
        if self.verifying {
            self.readWanted = true
        } else {
            context.read()
        }
    }

    private func pass(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        if self.verifying {
            self.held.append(part)
            return
        }
        guard case .head(let head) = part,
            case .needsVerification(let credentials) = self.authenticator.verdict(
                header: head.headers["proxy-authorization"].first)
        else {
            context.fireChannelRead(self.wrapInboundOut(part))
            return
        }
        self.verifying = true
        self.held.append(part)
        let authenticator = self.authenticator
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            authenticator.verify(credentials)
        }.whenComplete { result in
            if (try? result.get()) == true {
                bound.value.release()
            } else {
                eventLoop.scheduleTask(in: Self.failureDelay) { bound.value.release() }
            }
        }
    }

    private func release() {
        guard let context = self.context else { return }
        self.verifying = false
        let head = self.held.removeFirst()
        context.fireChannelRead(self.wrapInboundOut(head))
        while !self.verifying, let part = self.held.popFirst() { self.pass(part, context: context) }
        context.fireChannelReadComplete()
        if !self.verifying && self.readWanted {
            self.readWanted = false
            context.read()
        }
    }
}

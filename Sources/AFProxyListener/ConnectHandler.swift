import AFProxyManager
import AFProxyModel
import NIOCore
import NIOHTTP1

/// Answers one CONNECT (or opens a WebSocket handshake's origin connection, `StreamUpgrade`, or
/// a SOCKS5 request's, `SocksHandler`) and turns its connection into a tunnel. It takes the place
/// of the HTTP handlers once the CONNECT has been parsed: from then on the connection carries raw
/// bytes, so the answer (200, or a refusal with a text body; a SOCKS5 reply) is written as bytes
/// too. While upstream is being connected it holds the client's reads and keeps what the client
/// sent early; once the 200 is out it hands both to the task's relay and leaves the pipeline.
///
/// `ConnectionTimeoutHandler` stays at the head of the pipeline: to it the tunnel is one long
/// request, during which no timer of its runs.
final class ConnectHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Plan {
        case open(StreamRequest)
        case refuse(ProxyRefusal)
    }

    /// The protocol the client asked in, and so answers in.
    enum Answer {
        case http(HTTPVersion, via: String)
        case socks
        /// Answered before the tunnel opened (`SocksHandler`, for a host it may intercept): a
        /// failure can only close the connection.
        case given
    }

    private let plan: Plan
    private let answer: Answer
    private let manager: SessionManager
    /// How the connection goes on when the CONNECT is intercepted (`StreamRequest.intercepted`).
    private let intercept: InterceptSetup?
    private var context: ChannelHandlerContext?
    private var task: StreamTask?
    /// Bytes the client sent after its CONNECT, before the 200: the relay gets them first.
    private var early = CircularBuffer<ByteBuffer>()
    /// The client half-closed before the 200 (it sent all it had): passed on after `early`.
    private var inputEnded = false
    /// The answer is written (or the client is gone): nothing more to do here.
    private var answered = false

    private init(plan: Plan, answer: Answer, manager: SessionManager, intercept: InterceptSetup?) {
        self.plan = plan
        self.intercept = intercept
        self.answer = answer
        self.manager = manager
    }

    /// Replaces the HTTP handlers of `context`'s pipeline, the handler of `context` among them,
    /// with a `ConnectHandler`, which then carries out `plan`. Called on the CONNECT's end, when
    /// the decoder has stopped parsing: it leaves last, on the next loop turn, and forwards as
    /// bytes what the client sent after the head (`leftOverBytesStrategy: .forwardBytes`).
    static func takeOver(
        _ context: ChannelHandlerContext, plan: Plan, version: HTTPVersion, via: String, manager: SessionManager,
        intercept: InterceptSetup? = nil
    ) {
        let handler = ConnectHandler(
            plan: plan, answer: .http(version, via: via), manager: manager, intercept: intercept)
        let gate = InputClosedGate()
        let pipeline = context.pipeline.syncOperations
        do {
            try pipeline.addHandler(handler)
            try pipeline.addHandler(gate, position: .first)
            try pipeline.removeHandler(pipeline.handler(type: ClientResponseEncoder.self), promise: nil)
            try pipeline.removeHandler(pipeline.handler(type: NIOHTTPResponseHeadersValidator.self), promise: nil)
            try pipeline.removeHandler(pipeline.handler(type: ProxyErrorHandler.self), promise: nil)
            try pipeline.removeHandler(pipeline.handler(type: UpgradeDeclineHandler.self), promise: nil)
            if let gate = try? pipeline.handler(type: ProxyAuthGate.self) { pipeline.removeHandler(gate, promise: nil) }
            pipeline.removeHandler(context: context, promise: nil)
            let decoder = try pipeline.handler(type: ByteToMessageHandler<RequestDecoder>.self)
            pipeline.removeHandler(decoder).assumeIsolated().whenComplete { _ in gate.open() }
            // From now on a half-close of the client is an event to pass on, not the end.
            try context.channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: true)
        } catch {
            context.close(promise: nil)
            return
        }
        handler.begin()
    }

    /// Opens `request`'s tunnel behind the handler of `context` (`SocksHandler`,
    /// `ArrivalSniffer`), which leaves: what the client sent already (`early`, then its
    /// half-close when `inputEnded`) goes to the relay first, and the SOCKS5 reply, unless
    /// `answered`, is written once the destination answered (or refused).
    static func takeOverSocks(
        _ context: ChannelHandlerContext, request: StreamRequest, early: ByteBuffer, inputEnded: Bool = false,
        answered: Bool, manager: SessionManager, intercept: InterceptSetup?
    ) {
        let handler = ConnectHandler(
            plan: .open(request), answer: answered ? .given : .socks, manager: manager, intercept: intercept)
        if early.readableBytes > 0 { handler.early.append(early) }
        handler.inputEnded = inputEnded
        let pipeline = context.pipeline.syncOperations
        do {
            try pipeline.addHandler(handler, position: .after(context.handler))
            pipeline.removeHandler(context: context, promise: nil)
            // From now on a half-close of the client is an event to pass on, not the end.
            try context.channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: true)
        } catch {
            context.close(promise: nil)
            return
        }
        handler.begin()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    private func begin() {
        guard let context = self.context else { return }
        switch self.plan {
        case .refuse(let refusal):
            self.refuse(refusal, context: context)
        case .open(let request):
            let task = self.manager.startStream(request, on: context.eventLoop)
            self.task = task
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            task.established.whenComplete { result in bound.value.established(result) }
        }
    }

    private func established(_ result: Result<Void, any Error>) {
        guard !self.answered, let context = self.context, let task = self.task else { return }
        switch result {
        case .success:
            self.answered = true
            switch self.answer {
            case .http(let version, _) where task.request.upgrade == nil:
                let answer =
                    "HTTP/\(version.major).\(version.minor) 200 Connection established\r\n"
                    + "Date: \(HTTPDate.now())\r\n\r\n"
                context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
            case .http, .given: break
            case .socks:
                let reply = SocksHandshake.reply(.succeeded)
                context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: reply)), promise: nil)
            }
            guard task.attachClient(context.channel) else {
                context.close(promise: nil)
                return
            }
            let channel = context.channel
            if task.request.intercepted {
                do {
                    try self.intercept?.install(on: channel, task: task)
                } catch {
                    context.close(promise: nil)
                    return
                }
            }
            if !self.early.isEmpty {
                while let bytes = self.early.popFirst() { context.fireChannelRead(self.wrapInboundOut(bytes)) }
                context.fireChannelReadComplete()
            }
            if self.inputEnded { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            channel.read()  // the relay's glue decides from here
        case .failure(let error):
            let failure = error as? TaskFailure ?? .upstreamBroken("\(error)")
            switch self.answer {
            case .http:
                let status = HTTPResponseStatus(statusCode: failure.httpStatus)
                self.refuse(ProxyRefusal(status, failure.message), context: context)
            case .given:
                self.answered = true
                context.close(promise: nil)
            case .socks:
                self.answered = true
                let reply = SocksHandshake.reply(SocksHandshake.ReplyCode(failure))
                let channel = context.channel
                context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: reply)))
                    .whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }

    /// Answers with `refusal` and closes: what follows a refused CONNECT cannot be read as HTTP.
    /// (SOCKS5 requests are refused by `SocksHandler`, before they come here.)
    private func refuse(_ refusal: ProxyRefusal, context: ChannelHandlerContext) {
        self.answered = true
        let channel = context.channel
        guard case .http(let version, let via) = self.answer else {
            context.close(promise: nil)
            return
        }
        context.writeAndFlush(self.wrapOutboundOut(refusal.bytes(version: version, via: via)))
            .whenComplete { _ in channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !self.answered { self.early.append(self.unwrapInboundIn(data)) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent {
            self.inputEnded = true
            // A held tunnel whose client left ends here; its `established` then fails.
            if !self.answered { self.task?.clientHalfClosed(sentBytes: !self.early.isEmpty) }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Held until the relay takes over: it reads only while the other side can take the bytes.
    func read(context: ChannelHandlerContext) {}

    func channelInactive(context: ChannelHandlerContext) {
        if !self.answered {
            self.answered = true
            self.task?.clientClosed()
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

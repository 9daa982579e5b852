import AFProxyManager
import AFProxyModel
import NIOCore
import NIOHTTP1

/// One client connection: turns each request into a task, streams the request body to it and its
/// response back, one exchange at a time. Pipelined requests are queued here until the response
/// before them ended, so they are answered in order. (NIO's `HTTPServerPipelineHandler` does the
/// same but withholds `read()` during every response, which costs two epoll_ctl calls a request
/// on a keep-alive connection that never pipelines; here reads are held only while a pipelined
/// request actually waits.)
///
/// Backpressure: the response side is the task delegate's (it pauses curl while too many bytes
/// are on their way to this socket); the request side is here: `read()` is held back while the
/// task's upload buffer is full, a person suspended the task, or a pipelined request waits.
///
/// A CONNECT ends HTTP on the connection: at its end this handler and the HTTP codec leave the
/// pipeline to a `ConnectHandler`, which opens the tunnel.
final class ProxyConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    enum ReadHold {
        case backpressure
        case suspended
        case pipelined
        /// The parser failed: nothing after the malformed request can be read.
        case malformed
    }

    /// What arrived before the current exchange ended, replayed in order once it did.
    private enum Queued {
        case part(HTTPServerRequestPart)
        case malformed(ProxyRefusal)
    }

    private struct Exchange {
        var task: TaskDelegate
        var version: HTTPVersion
        var keepAlive: Bool
        var requestEnded = false
        var responseStarted = false
        /// How the response body is framed for the client, once its head went out.
        var framing = ClientResponseHead.Framing.none
    }

    private enum State {
        case idle
        case forwarding(Exchange)
        /// A refused request's body is being dropped until its end; then the refusal is written.
        case refusing(ProxyRefusal, HTTPVersion)
        /// A CONNECT head arrived; at its end the connection is handed to a `ConnectHandler`.
        case tunnel(ConnectHandler.Plan, HTTPVersion)
        case closed
    }

    /// The request being answered is a HEAD: an answer of our own then has no body either.
    private var answeringHead = false
    private let manager: SessionManager
    private let validator: RequestValidator
    private let clientAddress: String
    private var state = State.idle
    private var context: ChannelHandlerContext?
    private var bridge: ConnectionBridge?
    private var holds: Set<ReadHold> = []
    private var readPending = false
    /// Parts of requests that arrived before the current exchange ended.
    private var queued = CircularBuffer<Queued>()

    init(manager: SessionManager, validator: RequestValidator, clientAddress: String) {
        self.manager = manager
        self.validator = validator
        self.clientAddress = clientAddress
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.bridge = ConnectionBridge(handler: self, eventLoop: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.bridge = nil
    }

    // MARK: inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        if self.canHandleNow && self.queued.isEmpty {
            self.handle(part, context: context)
        } else if case .closed = self.state {
            return
        } else {
            self.queued.append(.part(part))
            self.holds.insert(.pipelined)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let malformed = event as? ProxyErrorHandler.MalformedRequest else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        self.holds.insert(.malformed)
        if self.canHandleNow && self.queued.isEmpty {
            self.refuseMalformed(malformed.refusal, context: context)
        } else if case .closed = self.state {
            return
        } else {
            self.queued.append(.malformed(malformed.refusal))
        }
    }

    /// The parser failed on the current request (its body) or on the next one: answer unless a
    /// response already started, and close either way.
    private func refuseMalformed(_ refusal: ProxyRefusal, context: ChannelHandlerContext) {
        var refusal = refusal
        refusal.closeConnection = true
        switch self.state {
        case .forwarding(let exchange):
            exchange.task.clientClosed()
            if exchange.responseStarted {
                self.state = .closed
                context.close(promise: nil)
            } else {
                self.writeRefusal(refusal, version: exchange.version, context: context)
            }
        case .refusing(_, let version), .tunnel(_, let version):
            self.writeRefusal(refusal, version: version, context: context)
        case .idle:
            self.answeringHead = false  // the malformed request is the one answered
            self.writeRefusal(refusal, version: .http1_1, context: context)
        case .closed:
            break
        }
    }

    /// The part can go to the current request (its body and end), or starts a request while
    /// the connection is idle.
    private var canHandleNow: Bool {
        switch self.state {
        case .idle, .refusing, .tunnel: true
        case .forwarding(let exchange): !exchange.requestEnded
        case .closed: false
        }
    }

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            self.answeringHead = head.method == .HEAD
            self.receiveHead(head, context: context)
        case .body(let buffer):
            guard case .forwarding(let exchange) = self.state, !exchange.requestEnded else { return }
            if !exchange.task.appendRequestBody(buffer) {
                self.holds.insert(.backpressure)
            }
        case .end:
            switch self.state {
            case .forwarding(var exchange):
                exchange.requestEnded = true
                self.state = .forwarding(exchange)
                exchange.task.finishRequestBody()
            case .refusing(let refusal, let version):
                self.writeRefusal(refusal, version: version, context: context)
            case .tunnel(let plan, let version):
                self.state = .closed
                ConnectHandler.takeOver(
                    context, plan: plan, version: version, via: self.validator.via, manager: self.manager)
            case .idle, .closed:
                break
            }
        }
    }

    /// After an exchange ended on an open connection: the requests that waited, in order.
    private func drainQueued(context: ChannelHandlerContext) {
        self.holds.remove(.pipelined)
        while self.canHandleNow, let next = self.queued.popFirst() {
            switch next {
            case .part(let part): self.handle(part, context: context)
            case .malformed(let refusal): self.refuseMalformed(refusal, context: context)
            }
        }
        if !self.queued.isEmpty { self.holds.insert(.pipelined) }
        self.releaseReadIfPossible()
    }

    private func receiveHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard case .idle = self.state else { return }
        context.triggerUserOutboundEvent(ConnectionPhase.requestStarted, promise: nil)
        if head.method == .CONNECT {
            switch self.validator.validateConnect(head, client: self.clientAddress) {
            case .success(let request): self.state = .tunnel(.open(request), head.version)
            case .failure(let refusal): self.state = .tunnel(.refuse(refusal), head.version)
            }
            return
        }
        switch self.validator.validate(head, client: self.clientAddress) {
        case .failure(let refusal):
            // Framing we cannot trust: answer at once and close. Otherwise drop the body first.
            if refusal.closeConnection {
                self.writeRefusal(refusal, version: head.version, context: context)
            } else {
                self.state = .refusing(refusal, head.version)
            }
        case .success(let request):
            if head.headers["expect"].first?.lowercased() == "100-continue" {
                context.writeAndFlush(
                    self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))),
                    promise: nil)
            }
            let task = self.manager.startTask(request, client: self.bridge!)
            self.state = .forwarding(Exchange(task: task, version: head.version, keepAlive: head.isKeepAlive))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .forwarding(let exchange) = self.state {
            exchange.task.clientClosed()
        }
        self.state = .closed
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // I/O errors (a reset); parser errors arrive as `MalformedRequest` instead.
        context.close(promise: nil)
    }

    // MARK: outbound

    func read(context: ChannelHandlerContext) {
        if self.holds.isEmpty {
            context.read()
        } else {
            self.readPending = true
        }
    }

    func pauseReading(for task: TaskDelegate, reason: ReadHold) {
        guard case .forwarding(let exchange) = self.state, exchange.task === task else { return }
        self.holds.insert(reason)
    }

    func resumeReading(for task: TaskDelegate, reason: ReadHold) {
        guard case .forwarding(let exchange) = self.state, exchange.task === task else { return }
        self.holds.remove(reason)
        self.releaseReadIfPossible()
    }

    private func releaseReadIfPossible() {
        guard self.holds.isEmpty, self.readPending, let context = self.context else { return }
        self.readPending = false
        context.read()
    }

    // MARK: deliveries from the task (on this event loop)

    func deliver(_ delivery: ResponseDelivery, of task: TaskDelegate) {
        guard let context = self.context, case .forwarding(var exchange) = self.state, exchange.task === task else {
            // A late delivery for an exchange that ended: acknowledge its bytes all the same.
            if let body = delivery.body { task.clientDidWrite(bytes: body.readableBytes) }
            return
        }
        if !exchange.responseStarted {
            for interim in delivery.interim {
                guard let head = ClientResponseHead.interim(interim, clientVersion: exchange.version, via: self.validator.via)
                else { continue }
                context.write(self.wrapOutboundOut(.head(head)), promise: nil)
            }
        }
        if let head = delivery.head {
            switch ClientResponseHead.make(
                head, requestIsHead: task.request.isHead, clientVersion: exchange.version,
                keepAlive: exchange.keepAlive, via: self.validator.via)
            {
            case .success(let response):
                exchange.responseStarted = true
                exchange.framing = response.framing
                if response.closeAfter { exchange.keepAlive = false }
                context.write(self.wrapOutboundOut(.head(response.head)), promise: nil)
            case .failure(let refusal):
                task.abandon(because: refusal.message)
                if let body = delivery.body { task.clientDidWrite(bytes: body.readableBytes) }
                self.writeRefusal(refusal, version: exchange.version, context: context)
                return
            }
        }
        if let body = delivery.body, exchange.framing == .none {
            task.clientDidWrite(bytes: body.readableBytes)  // a bodiless answer: nothing to send
        } else if var body = delivery.body {
            let count = body.readableBytes
            let promise = context.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenComplete { _ in task.clientDidWrite(bytes: count) }
            if exchange.framing == .chunked { body = ChunkedFraming.chunk(body, allocator: context.channel.allocator) }
            context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
        }
        self.state = .forwarding(exchange)
        guard let end = delivery.end else {
            context.flush()
            return
        }
        switch end {
        case .complete where exchange.responseStarted:
            self.finishExchange(exchange, trailers: delivery.trailers, context: context)
        case .complete:
            let refusal = ProxyRefusal(.badGateway, "upstream ended without a response")
            self.writeRefusal(refusal, version: exchange.version, context: context)
        case .failed(let failure) where !exchange.responseStarted:
            let refusal = ProxyRefusal(
                HTTPResponseStatus(statusCode: failure.httpStatus), failure.message,
                closeConnection: !exchange.requestEnded || !exchange.keepAlive)
            self.writeRefusal(refusal, version: exchange.version, context: context)
        case .failed:
            // The response started and cannot be completed: close before its end so the client
            // sees a truncated message, never a short body passed off as complete.
            context.flush()
            self.state = .closed
            context.close(promise: nil)
        }
    }

    private func finishExchange(_ exchange: Exchange, trailers: HTTPHeaderList, context: ChannelHandlerContext) {
        let keepOpen = exchange.keepAlive && exchange.requestEnded
        self.state = keepOpen ? .idle : .closed
        self.holds.formIntersection([.malformed])  // the parser cannot go on past a failure
        if exchange.framing == .chunked {
            let last = ChunkedFraming.last(trailers: trailers, allocator: context.channel.allocator)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(last))), promise: nil)
        }
        let ended = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if keepOpen {
            context.triggerUserOutboundEvent(ConnectionPhase.responseEnded, promise: nil)
            self.drainQueued(context: context)
        } else {
            ended.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }

    private func writeRefusal(_ refusal: ProxyRefusal, version: HTTPVersion, context: ChannelHandlerContext) {
        let (head, body) = refusal.response(version: version, via: self.validator.via)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if !self.answeringHead {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        }
        let ended = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        self.holds.formIntersection([.malformed])  // the parser cannot go on past a failure
        if refusal.closeConnection {
            self.state = .closed
            ended.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        } else {
            self.state = .idle
            context.triggerUserOutboundEvent(ConnectionPhase.responseEnded, promise: nil)
            self.drainQueued(context: context)
        }
    }
}

extension HTTPVersion: @retroactive Comparable {
    public static func < (lhs: HTTPVersion, rhs: HTTPVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}

import AFProxyManager
import AFProxyModel
import AFProxyServerKit
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
/// A CONNECT ends HTTP on the connection, and so does a WebSocket handshake: at its end this
/// handler and the HTTP codec leave the pipeline to a `ConnectHandler`, which opens the tunnel.
///
/// On an HTTP/2 stream (`overStream`) the same handler serves the stream's one exchange behind
/// NIO's HTTP/2-to-HTTP/1 codec: the stream channel's reads and writes are that stream's flow
/// control, so holding reads or writes here pauses the one stream, never its connection.
final class ProxyConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart
    typealias State = ClientConnectionState<HTTPTask>

    private let manager: SessionManager
    private let validator: RequestValidator
    private let clientAddress: String
    /// The lookup of the client's process, when the client is on this machine.
    private let clientProcess: ClientProcessSlot?
    /// The HTTP handlers in front of this one, shed while the connection is idle for a while.
    let codec: ClientCodec
    /// The decoder among them, whose parser goes as soon as the connection is idle.
    var decoder: RequestDecoder { self.codec.decoder }
    /// The parser's last part was a request's `.end`, with no head or error after it: with the
    /// connection idle, the decoder may let its parser go. Not after a request that asks for a
    /// protocol upgrade: NIO's parser stops at its end and reads nothing more, and keeping it
    /// keeps such a connection as it was.
    private var parsedToRequestEnd = false
    private var upgradeAsked = false
    /// The timer was told the current request's body is awaited (`ConnectionPhase.bodyAwaited`).
    private var bodyTimed = false
    private(set) var state = State()
    private var context: ChannelHandlerContext?
    private var bridge: ConnectionBridge?
    /// How a CONNECT is intercepted when a rule says so; nil: never (or inside an intercepted
    /// connection already).
    private let intercept: InterceptSetup?
    /// Inside a connection opened before its first request (intercepted, SOCKS5, captured):
    /// its stream task, if any, and the user who opened it.
    private let carrier: RequestCarrier?
    /// The handler serves one HTTP/2 stream: one exchange, which never keeps or closes the
    /// connection, and whose body is framed by the stream (`ClientResponseHead.Framing.frames`).
    private let overStream: Bool

    init(
        manager: SessionManager, validator: RequestValidator, clientAddress: String, codec: ClientCodec,
        clientProcess: ClientProcessSlot? = nil, intercept: InterceptSetup? = nil, carrier: RequestCarrier? = nil,
        overStream: Bool = false
    ) {
        self.overStream = overStream
        self.intercept = intercept
        self.carrier = carrier
        self.manager = manager
        self.validator = validator
        self.clientAddress = clientAddress
        self.clientProcess = clientProcess
        self.codec = codec
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.bridge = ConnectionBridge(handler: self, channel: context.channel)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.bridge = nil
    }

    // MARK: inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        switch part {
        case .head(let head):
            self.parsedToRequestEnd = false
            self.upgradeAsked = head.headers.contains(name: "upgrade")
        case .body:
            break
        case .end:
            self.parsedToRequestEnd = !self.upgradeAsked
        }
        let input = State.Input.part(part)
        if self.state.receive(input) { self.handle(input, context: context) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ConnectionTimeoutHandler.IdleForAWhile {
            return self.shedIfIdle(context: context)
        }
        if let silent = event as? ConnectionTimeoutHandler.BodySilent {
            return self.bodySilent(for: silent.timeout, context: context)
        }
        guard let malformed = event as? ProxyErrorHandler.MalformedRequest else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        self.parsedToRequestEnd = false
        let input = State.Input.malformed(malformed.refusal)
        if self.state.receive(input) { self.handle(input, context: context) }
    }

    private func handle(_ input: State.Input, context: ChannelHandlerContext) {
        switch input {
        case .part(.head(let head)):
            self.state.requestStarted(isHead: head.method == .HEAD)
            self.receiveHead(head, context: context)
        case .part(.body(let buffer)):
            guard let task = self.state.bodyTarget else { return }
            if !task.appendRequestBody(buffer) {
                self.state.hold(.backpressure, for: task)
                self.timeBody(context: context)
            }
        case .part(.end):
            defer { self.timeBody(context: context) }
            switch self.state.requestEnded() {
            case .none:
                break
            case .finishBody(let task):
                task.finishRequestBody()
            case .refuse(let refusal, let version):
                self.writeRefusal(refusal, version: version, context: context)
            case .takeOver(let plan, let version):
                ConnectHandler.takeOver(
                    context, plan: plan, version: version, via: self.validator.via, manager: self.manager,
                    intercept: self.intercept)
            }
        case .malformed(let refusal):
            switch self.state.malformed(refusal) {
            case .none:
                break
            case .abortAndClose(let task):
                task.clientClosed()
                self.closeLingering(after: self.flushWritten(context), context: context)
            case .refuse(let refusal, let version, let task):
                task?.clientClosed()
                self.writeRefusal(refusal, version: version, context: context)
            }
        }
    }

    /// Tells the timer whether the client owes the current request's body now: the body is still
    /// to come and nothing of ours holds the reads (a full upload buffer or a suspended task
    /// leave the client silent through no fault of its own).
    private func timeBody(context: ChannelHandlerContext) {
        let awaited = self.state.bodyTarget != nil && self.state.holds.isEmpty
        guard awaited != self.bodyTimed else { return }
        self.bodyTimed = awaited
        context.triggerUserOutboundEvent(
            awaited ? ConnectionPhase.bodyAwaited : ConnectionPhase.requestReceived, promise: nil)
    }

    /// The client sent nothing of its request body for `timeout`: its task ends with
    /// `client-timeout`, and the end answers it 408 and closes; a response already under way
    /// cannot be finished for it, so its connection closes now.
    private func bodySilent(for timeout: TimeAmount, context: ChannelHandlerContext) {
        self.bodyTimed = false
        guard let task = self.state.bodyTarget, let exchange = self.state.exchange(of: task) else { return }
        let seconds = timeout.nanoseconds / 1_000_000_000
        task.clientWentSilent(.clientTimeout("the client sent nothing of its request body for \(seconds) s"))
        guard exchange.responseStarted else { return }
        self.state.close()
        self.closeLingering(after: self.flushWritten(context), context: context)
    }

    /// After an exchange ended on an open connection: the requests that waited, in order. If
    /// none did, the connection is idle and its parser can go.
    private func drainQueued(context: ChannelHandlerContext) {
        while let next = self.state.nextQueued() { self.handle(next, context: context) }
        if self.state.queueDrained() { context.read() }
        if case .idle = self.state.phase, self.parsedToRequestEnd { self.decoder.releaseParser() }
    }

    /// The connection has been idle for a while: its codec goes until the next bytes, if nothing
    /// in it is worth keeping (no request under way or queued, the parser let go).
    private func shedIfIdle(context: ChannelHandlerContext) {
        guard case .idle = self.state.phase, self.state.queueIsEmpty, self.parsedToRequestEnd,
            !self.decoder.holdsParser
        else { return }
        do {
            try self.codec.shed(from: context.pipeline.syncOperations, before: self, on: context.eventLoop)
        } catch {
            context.close(promise: nil)
        }
    }

    private func receiveHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard case .idle = self.state.phase else { return }
        context.triggerUserOutboundEvent(ConnectionPhase.requestReceived, promise: nil)
        self.bodyTimed = false
        if head.method == .CONNECT {
            switch self.validator.validateConnect(head, client: self.clientAddress) {
            case .success(var request):
                request.process = self.clientProcess
                request.intercepted = self.intercept?.interception.intercepts(host: request.host) ?? false
                self.state.openTunnelAtEnd(.open(request), version: head.version)
            case .failure(let refusal): self.state.openTunnelAtEnd(.refuse(refusal), version: head.version)
            }
            return
        }
        if RequestValidator.asksForWebSocket(head) {
            switch self.validator.validateUpgrade(head, client: self.clientAddress) {
            case .success(var request):
                self.carry(&request.process, &request.parent, &request.proxyUser)
                self.state.openTunnelAtEnd(.open(request), version: head.version)
            case .failure(let refusal): self.state.openTunnelAtEnd(.refuse(refusal), version: head.version)
            }
            return
        }
        switch self.validator.validate(head, client: self.clientAddress) {
        case .failure(var refusal):
            // A client that asked for the connection to close has it closed after our own answer
            // too (RFC 9112 §9.6), where a refusal would otherwise keep it (a 421, a 407).
            if !head.isKeepAlive { refusal.closeConnection = true }
            // Framing we cannot trust: answer at once and close. Otherwise drop the body first.
            if refusal.closeConnection {
                self.writeRefusal(refusal, version: head.version, context: context)
            } else {
                self.state.refuseAfterBody(refusal, version: head.version)
            }
        case .success(var request):
            self.carry(&request.process, &request.parent, &request.proxyUser)
            let task = self.manager.startTask(request, client: self.bridge!)
            // The validator kept `Expect` for the origin only where a 100 means something.
            let awaitsContinue = request.headers.first("expect") != nil
            self.state.forward(
                State.Exchange(
                    task: task, version: head.version, keepAlive: self.overStream || head.isKeepAlive,
                    awaitsContinue: awaitsContinue))
            if request.body != .none { self.timeBody(context: context) }
        }
    }

    /// What a request read here takes from its connection: the client's process and, inside a
    /// connection opened before it, that connection's proxy user and task, which counts it.
    private func carry(_ process: inout ClientProcessSlot?, _ parent: inout Int?, _ proxyUser: inout String?) {
        process = self.clientProcess
        guard let carrier = self.carrier else { return }
        proxyUser = carrier.proxyUser
        guard let task = carrier.task else { return }
        parent = task.id
        task.carriedRequest()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.state.channelClosed()?.clientClosed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // I/O errors (a reset); parser errors arrive as `MalformedRequest` instead.
        context.close(promise: nil)
    }

    // MARK: outbound

    func read(context: ChannelHandlerContext) {
        if self.state.read() { context.read() }
    }

    func pauseReading(for task: HTTPTask, reason: State.ReadHold) {
        self.state.hold(reason, for: task)
        if let context = self.context { self.timeBody(context: context) }
    }

    func resumeReading(for task: HTTPTask, reason: State.ReadHold) {
        if self.state.release(reason, for: task) { self.context?.read() }
        if let context = self.context { self.timeBody(context: context) }
    }

    // MARK: deliveries from the task (on this event loop)

    func deliver(_ delivery: ResponseDelivery, of task: HTTPTask) {
        guard let context = self.context, var exchange = self.state.exchange(of: task) else {
            // A late delivery for an exchange that ended: acknowledge its bytes all the same.
            if let body = delivery.body { task.clientDidWrite(bytes: body.readableBytes) }
            return
        }
        if !exchange.responseStarted {
            for interim in delivery.interim {
                // An HTTP/1.0 client gets none; the origin's 100 goes once, and not after ours.
                guard
                    let head = ClientResponseHead.interim(
                        interim, clientVersion: exchange.version, via: self.validator.via),
                    interim.status != 100 || self.state.forwardsContinue(for: task)
                else { continue }
                context.write(self.wrapOutboundOut(.head(head)), promise: nil)
            }
        }
        if let head = delivery.head {
            // A response that came before the request body ended closes the connection: the
            // rest of that body may never come, and nothing after it could be read.
            switch ClientResponseHead.make(
                head, requestIsHead: task.request.isHead, clientVersion: exchange.version,
                keepAlive: exchange.keepAlive && exchange.requestEnded, via: self.validator.via)
            {
            case .success(let response):
                self.state.responseStarted(framing: response.framing, closeAfter: response.closeAfter)
                exchange = self.state.exchange(of: task)!
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
        guard let end = delivery.end else {
            context.flush()
            return
        }
        switch end {
        case .complete where exchange.responseStarted:
            self.finishExchange(framing: exchange.framing, trailers: delivery.trailers, context: context)
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
            self.state.close()
            self.closeLingering(after: self.flushWritten(context), context: context)
        }
    }

    private func finishExchange(
        framing: ClientResponseHead.Framing, trailers: HTTPHeaderList, context: ChannelHandlerContext
    ) {
        let end = self.state.exchangeEnded()
        if framing == .chunked {
            let last = ChunkedFraming.last(trailers: trailers, allocator: context.channel.allocator)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(last))), promise: nil)
        }
        var streamTrailers: HTTPHeaders?
        if framing == .frames, !trailers.isEmpty {
            streamTrailers = HTTPHeaders(HopByHopHeaders.removing(from: trailers).map { ($0.name, $0.value) })
        }
        let ended = context.writeAndFlush(self.wrapOutboundOut(.end(streamTrailers)))
        switch end {
        case .keepOpen:
            context.triggerUserOutboundEvent(ConnectionPhase.responseEnding, promise: nil)
            self.drainQueued(context: context)
        case .close:
            self.closeLingering(after: ended, context: context)
        }
    }

    /// Closes the connection once `written` (the last of what was written to it) went out, the
    /// lingering way (RFC 9112 §9.6): our side first; then what the client still sends (a request
    /// body the answer made moot, requests pipelined behind the last one answered) is read and
    /// dropped until the client closes too. Closing both sides while its bytes sit unread makes
    /// the kernel reset the connection, and a reset throws away whatever the client had not read
    /// yet: the fuzzing run lost the end of a pipelined 1.1 MB answer that way, behind a 502 that
    /// closed. `ClientConnectionState.close()` has already let go of the reads.
    private func closeLingering(after written: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        let channel = context.channel
        written.whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
            // The client's FIN closes the channel (remote half-closure is not allowed here);
            // one that neither sends its FIN nor stops sending is closed after a short while.
            channel.eventLoop.scheduleTask(in: Self.lingerLimit) { channel.close(promise: nil) }
        }
        context.read()
    }

    /// Flushes what was written, answering when it has all gone out: an empty write keeps its
    /// promise in order behind theirs (`ClientResponseEncoder`).
    private func flushWritten(_ context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(capacity: 0)))))
    }

    /// How long a client may keep its connection after our side of it closed (its answer went
    /// out): long enough for its FIN to cross a LAN or a busy host.
    static let lingerLimit = TimeAmount.seconds(2)

    /// curl is ready for the request body: a client that waits for `100 Continue` gets it.
    func sendContinue(for task: HTTPTask) {
        guard let context = self.context, self.state.continueWanted(for: task),
            let exchange = self.state.exchange(of: task)
        else { return }
        context.writeAndFlush(
            self.wrapOutboundOut(.head(HTTPResponseHead(version: exchange.version, status: .continue))),
            promise: nil)
    }

    private func writeRefusal(_ refusal: ProxyRefusal, version: HTTPVersion, context: ChannelHandlerContext) {
        let (head, body) = refusal.response(version: version, via: self.validator.via)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if !self.state.answeringHead {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        }
        let ended = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        self.state.refusalWritten(closing: refusal.closeConnection)
        if refusal.closeConnection {
            self.closeLingering(after: ended, context: context)
        } else {
            context.triggerUserOutboundEvent(ConnectionPhase.responseEnding, promise: nil)
            self.drainQueued(context: context)
        }
    }
}

import AFProxyModel
import AFProxyServerKit
import NIOCore
import NIOHTTP1
import NIOPosix

/// One control connection: HTTP/1.1 requests in, answers out. It checks who may ask, has
/// `ControlRouter` find the endpoint, and writes what the endpoint answers: a whole body, or the
/// head of a stream whose lines a feed handler added behind it writes until the client hangs up.
/// An endpoint whose answer blocks is run on `NIOThreadPool.singleton`, the one place control
/// work leaves the event loop; `HTTPServerPipelineHandler` holds a pipelined request back until
/// the answer before it ended. It tells the kit's `ConnectionTimeoutHandler` when a request has arrived and
/// when its answer ends (`ConnectionPhase`).
final class ControlHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let router: ControlRouter
    private let caller: ControlCaller
    private var request: HTTPRequestHead?
    /// The request's body (`ControlBodyLimitHandler` bounds it).
    private var body = ByteBuffer()
    /// The connection became a stream: its feed handler writes from now on.
    private var streaming = false

    init(router: ControlRouter, caller: ControlCaller) {
        self.router = router
        self.caller = caller
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.request = head
            self.body.clear()
        case .body(var part):
            self.body.writeBuffer(&part)
        case .end:
            guard let head = self.request, !self.streaming else { return }
            self.request = nil
            context.triggerUserOutboundEvent(ConnectionPhase.requestReceived, promise: nil)
            self.respond(to: head, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        if case .socket(let peer) = self.caller, !(peer?.isAllowed() ?? false) {
            let who = peer.map { "uid \($0.uid)" } ?? "an unidentified peer"
            return self.write(.error(.forbidden, "\(who) may not use this control socket"), head, context)
        }
        let request = ControlRequest(
            method: head.method.rawValue, target: head.uri, body: self.body, caller: self.caller)
        let dispatch: ControlRouter.Dispatch
        switch self.router.route(request) {
        case .failure(let refusal): return self.write(.refusal(refusal), head, context)
        case .success(let found): dispatch = found
        }
        guard dispatch.blocks else { return self.write(dispatch.answer(request), head, context) }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) {
            dispatch.answer(request)
        }.whenComplete { result in
            let (handler, context) = loopBound.value
            switch result {
            case .success(let answer): handler.write(answer, head, context)
            case .failure: handler.write(.error(.serviceUnavailable, "the daemon is stopping"), head, context)
            }
        }
    }

    private func write(_ answer: ControlAnswer, _ request: HTTPRequestHead, _ context: ChannelHandlerContext) {
        switch answer {
        case .body(let status, let contentType, let body):
            self.write(status: status, body: body, contentType: contentType, request, context)
        case .stream(let makeFeed):
            self.streaming = true
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/x-ndjson")
            headers.add(name: "Cache-Control", value: "no-store")
            headers.add(name: "Date", value: HTTPDate.now())
            // The head leaves only once the feed is subscribed: a client that acts as soon as it
            // has the head (changes the network, starts a request) then meets every event that
            // follows, where a head flushed first left a window in which they were lost.
            context.write(
                self.wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: .ok, headers: headers))),
                promise: nil)
            do {
                try context.pipeline.syncOperations.addHandler(makeFeed(), position: .after(self))
                context.flush()
            } catch {
                context.close(promise: nil)
            }
        }
    }

    private func write(
        status: HTTPResponseStatus, body: ByteBuffer, contentType: String, _ request: HTTPRequestHead,
        _ context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Date", value: HTTPDate.now())
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            self.wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
            promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        if request.isKeepAlive { context.triggerUserOutboundEvent(ConnectionPhase.responseEnding, promise: nil) }
        let done = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if !request.isKeepAlive {
            done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }
}

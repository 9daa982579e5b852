import NIOCore

/// Closes connections that hold a slot without using it: idle keep-alive connections after
/// `idleTimeout`, and clients that started a request head but did not finish it within
/// `headerTimeout` (408, the slowloris defence). It sits first in the pipeline, on raw bytes, so it
/// sees the first byte of a head before the parser does.
final class RequestTimeoutHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        case idle
        case receivingHead
        case busy
    }

    private let idleTimeout: TimeAmount
    private let headerTimeout: TimeAmount
    private var phase = Phase.idle
    private var timer: Scheduled<Void>?

    init(idleTimeout: Duration, headerTimeout: Duration) {
        self.idleTimeout = TimeAmount(idleTimeout)
        self.headerTimeout = TimeAmount(headerTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.arm(context, self.idleTimeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.arm(context, self.idleTimeout)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if self.phase == .idle {
            self.phase = .receivingHead
            self.arm(context, self.headerTimeout)
        }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let event = event as? ConnectionPhase else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch event {
        case .requestStarted:
            self.phase = .busy
            self.timer?.cancel()
            self.timer = nil
        case .responseEnded:
            self.phase = .idle
            self.arm(context, self.idleTimeout)
        }
        promise?.succeed()
    }

    private func arm(_ context: ChannelHandlerContext, _ delay: TimeAmount) {
        self.timer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.timer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.fire(context)
        }
    }

    private func fire(_ context: ChannelHandlerContext) {
        self.timer = nil
        switch self.phase {
        case .idle:
            context.close(promise: nil)
        case .receivingHead:
            let body = "408 Request Timeout: the request head did not arrive in time\n"
            let response = "HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\nVia: 1.1 afproxy\r\n\r\n\(body)"
            context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: response))).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        case .busy:
            break
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

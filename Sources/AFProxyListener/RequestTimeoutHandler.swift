import NIOCore
import NIOHTTP1

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
    /// This proxy's name in `Via`, for the 408.
    private let via: String
    private var phase = Phase.idle
    /// When the current phase expires; nil while busy. A keep-alive connection turns from idle to
    /// busy and back on every request, so the one scheduled timer is not moved each time: when
    /// it fires early it re-arms itself for the deadline that is current then.
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?

    init(idleTimeout: Duration, headerTimeout: Duration, via: String) {
        self.idleTimeout = TimeAmount(idleTimeout)
        self.headerTimeout = TimeAmount(headerTimeout)
        self.via = via
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.enter(.idle, context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.enter(.idle, context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.timer = nil
        self.timerDeadline = nil
        self.deadline = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if self.phase == .idle {
            self.enter(.receivingHead, context)
        }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let event = event as? ConnectionPhase else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch event {
        case .requestStarted: self.enter(.busy, context)
        case .responseEnded: self.enter(.idle, context)
        }
        promise?.succeed()
    }

    private func enter(_ phase: Phase, _ context: ChannelHandlerContext) {
        self.phase = phase
        switch phase {
        case .busy:
            self.deadline = nil
            return
        case .idle:
            self.deadline = context.eventLoop.now + self.idleTimeout
        case .receivingHead:
            self.deadline = context.eventLoop.now + self.headerTimeout
        }
        // A pending timer that fires no later than the new deadline re-arms itself then; one that
        // would fire after it is moved.
        guard let deadline = self.deadline else { return }
        if let timerDeadline = self.timerDeadline, self.timer != nil, timerDeadline <= deadline { return }
        self.timer?.cancel()
        self.schedule(at: deadline, context)
    }

    private func schedule(at deadline: NIODeadline, _ context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.timerDeadline = deadline
        self.timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.timerFired(context)
        }
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        self.timer = nil
        self.timerDeadline = nil
        guard let deadline = self.deadline else { return }
        guard deadline <= context.eventLoop.now else {
            self.schedule(at: deadline, context)
            return
        }
        self.fire(context)
    }

    private func fire(_ context: ChannelHandlerContext) {
        switch self.phase {
        case .idle:
            context.close(promise: nil)
        case .receivingHead:
            // The head never arrived, so neither did its version: answer as HTTP/1.1.
            let refusal = ProxyRefusal(.requestTimeout, "the request head did not arrive in time")
            let response = refusal.bytes(version: .http1_1, via: self.via)
            context.writeAndFlush(self.wrapOutboundOut(response)).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        case .busy:
            break
        }
    }
}

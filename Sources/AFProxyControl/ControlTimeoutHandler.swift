import NIOCore

/// Where a control connection is in its request/response cycle, as the handler that answers
/// requests tells the pipeline (an outbound user event) so that `ControlTimeoutHandler`, which sits
/// in front of the HTTP codec, knows which timer applies.
package enum ControlPhase: Sendable {
    /// A request arrived in full; the connection is being answered (maybe for a long time: the
    /// event stream), so no timer runs.
    case requestReceived
    /// The answer is about to end; the connection waits for its next request. Sent before the
    /// answer's last part is written, because writing it may deliver a pipelined request at once.
    case responseEnding
}

/// Closes control connections that hold a slot without using it: a request whose head and body
/// did not all arrive within `requestTimeout` of its first byte gets 408; a connection with no
/// request under way is closed quietly after `idleTimeout`. A connection being answered (a
/// command, or `GET /v1/events` for as long as its client reads) has no timer. It sits first in
/// the pipeline, on raw bytes, so it sees a request's first byte before the parser does; the
/// deadlines read the event loop's clock, so tests move it.
final class ControlTimeoutHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        case idle
        case receiving
        case answering
    }

    private let idleTimeout: TimeAmount
    private let requestTimeout: TimeAmount
    private var phase = Phase.idle
    private var timer: Scheduled<Void>?

    init(
        idleTimeout: TimeAmount = ControlLimits.idleTimeout,
        requestTimeout: TimeAmount = ControlLimits.requestTimeout
    ) {
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.enter(.idle, context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if self.timer == nil { self.enter(.idle, context) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if self.phase == .idle { self.enter(.receiving, context) }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let event = event as? ControlPhase else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch event {
        case .requestReceived: self.enter(.answering, context)
        case .responseEnding: self.enter(.idle, context)
        }
        promise?.succeed()
    }

    /// Control connections are few and their requests rare, so each phase simply gets a fresh timer.
    private func enter(_ phase: Phase, _ context: ChannelHandlerContext) {
        self.phase = phase
        self.timer?.cancel()
        self.timer = nil
        let timeout: TimeAmount
        switch phase {
        case .answering: return
        case .idle: timeout = self.idleTimeout
        case .receiving: timeout = self.requestTimeout
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.timer = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = loopBound.value
            handler.expire(phase, context)
        }
    }

    private func expire(_ phase: Phase, _ context: ChannelHandlerContext) {
        guard phase == self.phase else { return }
        self.timer = nil
        switch phase {
        case .idle:
            context.close(promise: nil)
        case .receiving:
            let seconds = self.requestTimeout.nanoseconds / 1_000_000_000
            let refusal = ControlRefusal(.requestTimeout, "the request did not arrive in full within \(seconds) s")
            context.writeAndFlush(self.wrapOutboundOut(refusal.bytes())).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        case .answering:
            break
        }
    }
}

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

    /// Sent inbound once a connection has been idle for `shedDelay`: the connection handler may
    /// then shed its codec (`ClientCodec`). Not at once: a busy keep-alive connection would pay
    /// for taking it out and putting it back on every request.
    struct IdleForAWhile: Sendable {}

    /// 250 ms: longer than the gap between a busy client's requests on one connection, far
    /// shorter than the seconds to minutes a browser keeps an idle connection open. Putting the
    /// codec back costs four handler allocations, a small part of a request through the proxy.
    static let shedDelay = TimeAmount.milliseconds(250)

    private let idleTimeout: TimeAmount
    private let headerTimeout: TimeAmount
    /// This proxy's name in `Via`, for the 408.
    private let via: String
    private var phase = Phase.idle
    /// When the current phase expires; nil while busy. A keep-alive connection turns from idle to
    /// busy and back on every request, so the one scheduled timer is not moved each time: when
    /// it fires early it re-arms itself for the deadline that is current then.
    private var deadline: NIODeadline?
    /// A scheduled callback to this handler rather than a scheduled closure: it costs the event
    /// loop one entry in its timer heap, where a closure cost three allocations besides (the task,
    /// its promise, the closure's context), about 0.25 KiB held by every idle connection.
    private var timer: NIOScheduledCallback?
    private var timerDeadline: NIODeadline?
    private var context: ChannelHandlerContext?
    /// When the idle connection is told it has been idle for a while; nil once told, or busy.
    private var shedAt: NIODeadline?

    init(idleTimeout: Duration, headerTimeout: Duration, via: String) {
        self.idleTimeout = TimeAmount(idleTimeout)
        self.headerTimeout = TimeAmount(headerTimeout)
        self.via = via
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { self.enter(.idle, context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.cancelTimer()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.enter(.idle, context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.cancelTimer()
        self.deadline = nil
        context.fireChannelInactive()
    }

    private func cancelTimer() {
        self.timer?.cancel()
        self.timer = nil
        self.timerDeadline = nil
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
            self.shedAt = nil
            return
        case .idle:
            self.deadline = context.eventLoop.now + self.idleTimeout
            self.shedAt = context.eventLoop.now + Self.shedDelay
        case .receivingHead:
            self.deadline = context.eventLoop.now + self.headerTimeout
            self.shedAt = nil
        }
        // A pending timer that fires no later than the new deadline re-arms itself then; one that
        // would fire after it is moved.
        guard let deadline = self.nextWakeup else { return }
        if let timerDeadline = self.timerDeadline, self.timer != nil, timerDeadline <= deadline { return }
        self.timer?.cancel()
        self.schedule(at: deadline, context)
    }

    private func schedule(at deadline: NIODeadline, _ context: ChannelHandlerContext) {
        self.timerDeadline = deadline
        // It fails only while the event loop shuts down, which closes the connection anyway.
        self.timer = try? context.eventLoop.assumeIsolated().scheduleCallback(at: deadline, handler: self)
    }

    /// The earlier of the phase's deadline and the idle connection's shedding.
    private var nextWakeup: NIODeadline? {
        guard let deadline = self.deadline else { return nil }
        return self.shedAt.map { min($0, deadline) } ?? deadline
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        self.timer = nil
        self.timerDeadline = nil
        let now = context.eventLoop.now
        if self.phase == .idle, let shedAt = self.shedAt, shedAt <= now {
            self.shedAt = nil
            context.fireUserInboundEventTriggered(IdleForAWhile())
        }
        guard let deadline = self.deadline else { return }
        guard deadline <= now else {
            if let next = self.nextWakeup { self.schedule(at: next, context) }
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

extension RequestTimeoutHandler: NIOScheduledCallbackHandler {
    func handleScheduledCallback(eventLoop: some EventLoop) {
        guard let context = self.context else { return }
        self.timerFired(context)
    }
}

import NIOCore

/// Closes connections that hold a slot without using it: a connection with no request under way
/// (just opened, or its last answer ended) is closed quietly after `idleTimeout`; a request that
/// started but did not arrive within `requestTimeout` of its first byte gets `timeoutAnswer` (a
/// 408) and the connection closes (the slowloris defence). A connection being answered has no
/// timer: the answering handler says when a request arrived and when its answer ends
/// (`ConnectionPhase`). It sits first in the pipeline, on raw bytes, so it sees a request's first
/// byte before the parser does; the deadlines read the event loop's clock, so tests move it.
///
/// The proxy times the head (`header-timeout`) and the gaps in a request body (`body-timeout`: a
/// body may stream for as long as the client keeps sending it, but a client silent mid-body for
/// that long is told so with `BodySilent`, and the proxy decides what to answer), and sheds an
/// idle connection's codec (`shedDelay`); the control socket times head and body together and
/// sheds nothing. Both answer with their own refusal.
package final class ConnectionTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    private enum Phase {
        case idle
        case receiving
        case receivingBody
        case busy
    }

    /// Sent inbound when a request body the handler awaits (`ConnectionPhase.bodyAwaited`) had no
    /// byte for `bodyTimeout`: the handler answers (408, or a close once its response started).
    package struct BodySilent: Sendable {
        package let timeout: TimeAmount
    }

    /// Sent inbound once a connection has been idle for `shedDelay`: the connection handler may
    /// then shed its codec. Not at once: a busy keep-alive connection would pay for taking it out
    /// and putting it back on every request.
    package struct IdleForAWhile: Sendable {
        package init() {}
    }

    private let idleTimeout: TimeAmount
    private let requestTimeout: TimeAmount
    /// The longest silence inside a request body; nil: bodies are not timed here.
    private let bodyTimeout: TimeAmount?
    /// How long an idle connection waits before `IdleForAWhile`; nil: never told.
    private let shedDelay: TimeAmount?
    /// The bytes of the 408, made when it is due (it carries a `Date`).
    private let timeoutAnswer: () -> ByteBuffer
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

    package init(
        idleTimeout: TimeAmount, requestTimeout: TimeAmount, bodyTimeout: TimeAmount? = nil,
        shedDelay: TimeAmount? = nil, timeoutAnswer: @escaping () -> ByteBuffer
    ) {
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.bodyTimeout = bodyTimeout
        self.shedDelay = shedDelay
        self.timeoutAnswer = timeoutAnswer
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { self.enter(.idle, context) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.cancelTimer()
        self.context = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        self.enter(.idle, context)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        self.cancelTimer()
        self.deadline = nil
        context.fireChannelInactive()
    }

    private func cancelTimer() {
        self.timer?.cancel()
        self.timer = nil
        self.timerDeadline = nil
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.phase {
        case .idle:
            self.enter(.receiving, context)
        case .receivingBody:
            // The pending timer re-arms itself for the deadline current when it fires.
            if let bodyTimeout = self.bodyTimeout { self.deadline = context.eventLoop.now + bodyTimeout }
        case .receiving, .busy:
            break
        }
        context.fireChannelRead(data)
    }

    package func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?)
    {
        guard let event = event as? ConnectionPhase else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch event {
        case .requestReceived: self.enter(.busy, context)
        case .bodyAwaited: self.enter(self.bodyTimeout == nil ? .busy : .receivingBody, context)
        case .responseEnding: self.enter(.idle, context)
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
            self.shedAt = self.shedDelay.map { context.eventLoop.now + $0 }
        case .receiving:
            self.deadline = context.eventLoop.now + self.requestTimeout
            self.shedAt = nil
        case .receivingBody:
            self.deadline = context.eventLoop.now + (self.bodyTimeout ?? self.requestTimeout)
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
        case .receiving:
            context.writeAndFlush(self.wrapOutboundOut(self.timeoutAnswer())).whenComplete {
                [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        case .receivingBody:
            // Once: the handler's answer ends the exchange, and a new phase follows.
            self.phase = .busy
            self.deadline = nil
            context.fireUserInboundEventTriggered(BodySilent(timeout: self.bodyTimeout ?? self.requestTimeout))
        case .busy:
            break
        }
    }
}

extension ConnectionTimeoutHandler: NIOScheduledCallbackHandler {
    package func handleScheduledCallback(eventLoop: some EventLoop) {
        guard let context = self.context else { return }
        self.timerFired(context)
    }
}

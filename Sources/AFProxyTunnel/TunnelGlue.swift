import AFProxyModel
import AFProxyRules
import FoundationEssentials
import NIOCore

/// One side of a tunnel's byte relay: the last handler of that side's pipeline, glued to its
/// partner on the other side, as in swift-nio-examples' connect-proxy (`GlueHandler`). Both
/// channels live on one event loop, so a chunk read on one side is written to the other as it
/// is: no thread hop, no copy.
///
/// Backpressure: a side lets `read()` through to its channel only while its partner is
/// writable and the task is not suspended. What NIO reads all the same (a read batch already
/// under way when a suspend came; everything up to a peer's half-close, which NIO reads at once
/// whatever `read()` said) is held here, uncounted, and passed on at resume, followed by the end
/// of input that came behind it; so the byte counts stop the moment the API says "suspended".
final class TunnelGlue: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let side: TunnelLifecycle.Side
    /// Set by the relay once both sides exist, cleared when the tunnel is over.
    var partner: TunnelGlue?
    private let relay: TunnelRelay
    private let counters: TunnelCounters
    private var context: ChannelHandlerContext?
    private var readPending = false
    private var held = CircularBuffer<ByteBuffer>()
    private var inputEndHeld = false
    private var sawFirstByte = false
    /// The task's throttle rules; bytes read on this side count against `direction`.
    private let throttle: ThrottleTicket?
    private let direction: ThrottleDirection
    /// A throttle bucket is in debt: no `read()` until the wake scheduled for it.
    private var throttled = false
    /// The client's side after an origin declined its upgrade: nothing more is read or passed.
    private var inputStopped = false
    /// The client's side of an upgrade before the origin's 101: what it sends is held.
    private var awaitingAnswer = false
    /// This side's input goes through the kernel (`SpliceRelay`): no `read()` goes through, and
    /// what NIO reads all the same is held and reported, to follow what the pipe holds.
    private(set) var spliced = false
    /// The relay wants to hear of each read passed on, to tell when the tunnel carries bulk
    /// (`TunnelSpliceGate`); off once it spliced or never will.
    var watchesForBulk = false
    /// Reads the WebSocket messages this side passes on, for a record rule; nil (the usual case,
    /// and once the framing broke): nothing reads them.
    private var messageReader: WebSocketFrameReader?
    private var recorder: WebSocketRecorder?

    init(side: TunnelLifecycle.Side, relay: TunnelRelay, counters: TunnelCounters, throttle: ThrottleTicket? = nil) {
        self.side = side
        self.relay = relay
        self.counters = counters
        self.throttle = throttle
        self.direction = side == .upstream ? .down : .up
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Bytes go straight through: a partner to take them, no suspend, nothing held before them.
    private var passesBytes: Bool {
        self.partner != nil && !self.counters.isPaused && !self.throttled && !self.awaitingAnswer && self.held.isEmpty
            && !self.spliced
    }

    private var mayRead: Bool {
        !self.counters.isPaused && !self.throttled && !self.inputStopped && !self.awaitingAnswer && !self.spliced
            && self.partner?.context?.channel.isWritable == true
    }

    // MARK: inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = self.unwrapInboundIn(data)
        if self.inputStopped { return }
        if self.side == .upstream && !self.sawFirstByte {
            self.sawFirstByte = true
            self.relay.upstreamSentFirstByte()
        }
        if self.side == .upstream && self.relay.awaitsAnswer { self.relay.readAnswer(buffer) }
        if self.passesBytes {
            // NIO stops a batch at a read that did not fill its buffer; one that did says the
            // socket held more: the gate's sign of bulk.
            if self.watchesForBulk {
                self.relay.relayed(buffer.readableBytes, filled: buffer.writableBytes == 0, from: self.side)
            }
            self.forward(buffer)
            self.checkThrottle(context.eventLoop)
        } else {
            self.held.append(buffer)
            if self.spliced { self.relay.nioReadWhileSpliced(self.side) }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.partner?.context?.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .some(.inputClosed) = event as? ChannelEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if self.passesBytes {
            self.relay.inputClosed(self.side)
        } else {
            self.inputEndHeld = true
            if self.spliced { self.relay.nioReadWhileSpliced(self.side) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.relay.channelClosed(self.side)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        self.relay.failed(self.side, error)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { self.partner?.resumeReading() }
        context.fireChannelWritabilityChanged()
    }

    // MARK: outbound

    func read(context: ChannelHandlerContext) {
        if self.mayRead && self.throttleAllowsRead(context) {
            context.read()
        } else {
            self.readPending = true
        }
    }

    // MARK: called by the partner and the relay

    /// Reads again if a read was held back and nothing holds it any more.
    func resumeReading() {
        guard self.readPending, self.mayRead, let context = self.context, self.throttleAllowsRead(context) else {
            return
        }
        self.readPending = false
        context.read()
    }

    /// Once the partner is there, and at resume: passes on what was held, then reads again.
    func release() {
        guard !self.spliced, self.partner != nil, !self.counters.isPaused, !self.throttled, !self.awaitingAnswer else {
            return
        }
        if !self.held.isEmpty {
            // A throttled side passes what it holds one read at a time, as its buckets allow.
            while !self.throttled, let buffer = self.held.popFirst() {
                self.forward(buffer)
                if let eventLoop = self.context?.eventLoop { self.checkThrottle(eventLoop) }
            }
            self.partner?.context?.flush()
        }
        if self.inputEndHeld && self.held.isEmpty {
            self.inputEndHeld = false
            self.relay.inputClosed(self.side)
        }
        self.resumeReading()
    }

    var channelIfActive: (any Channel)? {
        guard let channel = self.context?.channel, channel.isActive else { return nil }
        return channel
    }

    /// Whether splicing may take over this side now: nothing held, no end of input waiting,
    /// nothing that reads what passes (an upgrade's answer, a stopped input).
    var isClean: Bool {
        self.held.isEmpty && !self.inputEndHeld && !self.inputStopped && !self.awaitingAnswer
            && self.context?.channel.isActive == true
    }

    /// From now on NIO does not read this side (`SpliceRelay`). `autoRead` off takes back a
    /// read NIO has pending (the one asked at the channel's activation), which `read()` cannot.
    func enterSplice() {
        self.spliced = true
        try? self.context?.channel.syncOptions?.setOption(.autoRead, value: false)
    }

    /// This side's input is NIO's again, behind everything spliced: what NIO read meanwhile goes
    /// on, then the end of input, then reading as before.
    func leaveSplice() {
        guard self.spliced else { return }
        self.spliced = false
        self.readPending = true
        try? self.context?.channel.syncOptions?.setOption(.autoRead, value: true)
        self.release()
    }

    /// Completes once every write queued on this side so far went out (or failed).
    func queuedWritesDone() -> EventLoopFuture<Void>? {
        guard let context = self.context else { return nil }
        return context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)))
    }

    /// Writes what is queued, then shuts the output down: the partner's end of input, passed on.
    func shutdownOutputAfterWrites() {
        self.afterQueuedWrites { $0.close(mode: .output, promise: nil) }
    }

    /// Writes what is queued, then closes: the partner's channel is gone.
    func closeAfterWrites() {
        self.afterQueuedWrites { $0.close(promise: nil) }
    }

    func close() {
        self.context?.close(promise: nil)
    }

    /// From now on this side's bytes are dropped unread (`TunnelRelay.readAnswer`).
    func stopInput() {
        self.inputStopped = true
        self.awaitingAnswer = false
        self.held.removeAll()
        self.inputEndHeld = false
    }

    /// Holds this side's bytes until `answerArrived` (an upgrade's client, before the 101).
    func waitForAnswer() {
        self.awaitingAnswer = true
    }

    func answerArrived() {
        self.awaitingAnswer = false
        self.release()
    }

    /// Writes `text` to this side's channel as if its partner had sent it (an upgrade's
    /// request head, counted as bytes the client sent up).
    func send(_ text: String) {
        guard let context = self.context else { return }
        let buffer = context.channel.allocator.buffer(string: text)
        self.counters.add(buffer.readableBytes, from: self.side.other)
        context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
    }

    /// Whether the throttle lets this side read now; when not, reading waits for the wake it
    /// schedules. What one read brings is taken whole (`forward`), in debt if need be: a socket
    /// read cannot be sized to the tokens there are.
    private func throttleAllowsRead(_ context: ChannelHandlerContext) -> Bool {
        self.checkThrottle(context.eventLoop)
        if self.throttled { self.readPending = true }
        return !self.throttled
    }

    /// Asks the buckets whether this side may go on; when not, holds it (further bytes of a read
    /// batch under way wait in `held`, no `read()` goes through) until the wake it schedules.
    private func checkThrottle(_ eventLoop: any EventLoop) {
        guard !self.throttled, let throttle = self.throttle, throttle.isActive,
            case .wait(let wait) = throttle.acquire(self.direction, need: 0)
        else { return }
        self.throttled = true
        let glue = NIOLoopBound(self, eventLoop: eventLoop)
        let nanoseconds = wait.components.seconds * 1_000_000_000 + wait.components.attoseconds / 1_000_000_000
        eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
            glue.value.throttled = false
            glue.value.release()
        }
    }

    /// From now on the messages this side passes on are read into `recorder`.
    func record(with recorder: WebSocketRecorder) {
        self.recorder = recorder
        self.messageReader = recorder.reader(for: self.side)
    }

    private func forward(_ buffer: ByteBuffer) {
        self.counters.add(buffer.readableBytes, from: self.side)
        if self.messageReader != nil { self.readMessages(buffer) }
        if let throttle = self.throttle, throttle.isActive { throttle.take(self.direction, buffer.readableBytes) }
        self.partner?.context?.write(self.wrapOutboundOut(buffer), promise: nil)
    }

    /// Reads the very buffer that goes on (no copy but the payload bytes kept), in place.
    private func readMessages(_ buffer: ByteBuffer) {
        let messages = self.messageReader!.read(buffer, at: Date())
        if !messages.isEmpty { self.recorder?.keep(messages) }
        if self.messageReader!.stopped { self.messageReader = nil }
    }

    /// Writes complete in order, so an empty write's completion comes after every byte queued
    /// before it. (A plain `close(mode: .output)` would drop them when the input is already
    /// closed: NIO then escalates to a full close.)
    private func afterQueuedWrites(_ then: @escaping @Sendable (any Channel) -> Void) {
        guard let context = self.context else { return }
        let channel = context.channel
        context.writeAndFlush(self.wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            then(channel)
        }
    }
}

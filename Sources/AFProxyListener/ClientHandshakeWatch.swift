import AFProxyManager
import AFProxyModel
import NIOCore
import NIOTLS

/// Right behind the TLS handler of an intercepted connection until the client's first request
/// (or afproxy's first word): records on the stream task how long the client's handshake took,
/// or why it failed (`HandshakeVerdict`, from what `TLSRecordWatch` saw pass and BoringSSL's
/// error), and asks for the host to be passed through when the client refused the certificate.
/// It stays past the handshake because a client that pins its server's key completes the
/// handshake and then closes without a request.
final class ClientHandshakeWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let task: StreamTask
    private let host: String
    private let records: TLSRecordWatch
    private let timeout: TimeAmount
    private let passthrough: (HandshakeVerdict.Passthrough) -> Bool
    private let started = NIODeadline.now()
    private var timer: Scheduled<Void>?
    private var handshakeDone = false
    /// A verdict was recorded, a request came or afproxy spoke or closed: nothing more to judge.
    private var settled = false
    /// The client ended its side (close_notify, EOF): a close that follows is its doing.
    private var clientEnded = false
    private var handshakeEnded: NIODeadline?

    /// `passthrough`: called when the verdict asks for the host to be passed through (now or on
    /// a repeat); answers whether it is passed through from now on.
    init(
        task: StreamTask, host: String, records: TLSRecordWatch, timeout: TimeAmount,
        passthrough: @escaping (HandshakeVerdict.Passthrough) -> Bool
    ) {
        self.task = task
        self.host = host
        self.records = records
        self.timeout = timeout
        self.passthrough = passthrough
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let seconds = self.timeout.nanoseconds / 1_000_000_000
        self.timer = context.eventLoop.scheduleTask(in: self.timeout) {
            let (watch, context) = bound.value
            watch.conclude(
                HandshakeVerdict(
                    failure: .clientTLSFailed("the client did not complete its TLS handshake within \(seconds) s")),
                context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.timer?.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.handshakeCompleted) = event as? TLSUserEvent, !self.handshakeDone, !self.settled {
            self.handshakeDone = true
            self.timer?.cancel()
            self.handshakeEnded = .now()
            let elapsed = NIODeadline.now() - self.started
            self.task.clientHandshakeCompleted(milliseconds: Double(elapsed.nanoseconds) / 1_000_000)
            context.pipeline.syncOperations.removeHandler(self.records, promise: nil)
            QuickAck.now(on: context.channel)
        } else if case .some(.shutdownCompleted) = event as? TLSUserEvent {
            self.clientEnded = true
        } else if case .some(.inputClosed) = event as? ChannelEvent {
            self.clientEnded = true
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        if self.handshakeDone { self.leave(context) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        if self.handshakeDone { self.leave(context) }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // afproxy closes of its own accord (a timeout, the daemon stopping): not the client's
        // verdict on the certificate.
        if !self.clientEnded { self.settled = true }
        context.close(mode: mode, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !self.handshakeDone {
            self.conclude(.failed(self.records.records, error: "\(error)", host: self.host), context)
        } else {
            self.clientEnded = true
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !self.handshakeDone {
            self.conclude(.closed(self.records.records, host: self.host), context)
        } else if let ended = self.handshakeEnded,
            let verdict = HandshakeVerdict.closedAfterHandshake(host: self.host, after: .now() - ended)
        {
            self.conclude(verdict, context)
        }
        context.fireChannelInactive()
    }

    /// The client sent its request or afproxy answered: the certificate was accepted.
    private func leave(_ context: ChannelHandlerContext) {
        guard !self.settled else { return }
        self.settled = true
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func conclude(_ verdict: HandshakeVerdict, _ context: ChannelHandlerContext) {
        guard !self.settled else { return }
        self.settled = true
        self.timer?.cancel()
        var failure = verdict.failure
        if let passthrough = verdict.passthrough, self.passthrough(passthrough) {
            failure = failure.withMessage(
                failure.message
                    + "; the host is passed through as a plain tunnel for a while (intercept-auto-passthrough)")
        }
        self.task.clientHandshakeFailed(failure)
    }
}

import AFProxyModel
import NIOCore

/// First in an intercepted connection's pipeline, on the raw (encrypted) bytes: counts them
/// for the stream task, holds the reads of the handlers behind it while the task is suspended,
/// and reports the connection's end once, last.
final class InterceptGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let counters: TunnelCounters
    /// Let go once told of the end: the task holds this gate through its transport, so keeping
    /// the task here past the end would make a cycle that outlives both.
    private var delegate: (any TunnelTransferDelegate)?
    private var context: ChannelHandlerContext?
    /// A `read()` that came while paused, let through on resume.
    private var readHeld = false
    private var failure: TaskFailure?
    private(set) var isOver = false
    /// The client was answered 200 (`InterceptedConnection.start`).
    var established = false

    init(counters: TunnelCounters, delegate: any TunnelTransferDelegate) {
        self.counters = counters
        self.delegate = delegate
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.counters.add(self.unwrapInboundIn(data).readableBytes, from: .client)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        self.counters.add(self.unwrapOutboundIn(data).readableBytes, from: .upstream)
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if self.counters.isPaused {
            self.readHeld = true
        } else {
            context.read()
        }
    }

    func resume() {
        guard self.readHeld, let context = self.context else { return }
        self.readHeld = false
        context.read()
    }

    /// Canceled, or the client's handshake failed: the connection closes and its end records
    /// `failure`.
    func end(_ failure: TaskFailure) {
        if self.failure == nil { self.failure = failure }
        guard let context = self.context else {
            self.finish()
            return
        }
        context.close(promise: nil)
    }

    /// The handlers behind see the close first: the handshake watch may still record why the
    /// client went away (a close right after afproxy's certificate), and the task ends with that.
    func channelInactive(context: ChannelHandlerContext) {
        context.fireChannelInactive()
        self.finish()
    }

    private func finish() {
        guard !self.isOver else { return }
        self.isOver = true
        let end = self.failure.map(TunnelEnd.init) ?? TunnelEnd(reason: "client closed")
        let delegate = self.delegate
        self.delegate = nil
        delegate?.tunnelDidComplete(end)
    }
}

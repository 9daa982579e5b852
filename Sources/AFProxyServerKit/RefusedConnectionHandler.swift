import NIOCore

/// The whole pipeline of a connection refused at accept (`ConnectionAdmission.refuse`: over a
/// server's cap, or a client it does not allow): it writes the refusal, shuts its side of the connection once the
/// bytes are out, reads and drops what the client sends, and closes as soon as the client
/// closes or `linger` has passed, whichever comes first.
///
/// Closing at once, with the client's request unread or still on its way, makes the kernel
/// answer with a reset, which can destroy the refusal before the client reads it; the
/// half-closed wait lets the client read it and close first (a client that read the answer and
/// its end closes at once), so such a connection usually costs a descriptor for one round trip.
/// A write that fails closes the connection at once: nothing is left to wait for.
final class RefusedConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let response: ByteBuffer
    private let linger: TimeAmount
    private var answered = false
    private var timer: Scheduled<Void>?

    init(response: ByteBuffer, linger: TimeAmount) {
        self.response = response
        self.linger = linger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.answer(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.answer(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func channelInactive(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.timer = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    private func answer(_ context: ChannelHandlerContext) {
        guard !self.answered else { return }
        self.answered = true
        let channel = context.channel
        context.writeAndFlush(self.wrapOutboundOut(self.response)).whenComplete { result in
            guard case .success = result else { return channel.close(promise: nil) }
            // A channel that cannot half-close (not a socket) is closed outright.
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
        }
        self.timer = context.eventLoop.scheduleTask(in: self.linger) { channel.close(promise: nil) }
    }
}

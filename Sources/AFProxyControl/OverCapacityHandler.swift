import NIOCore

/// The whole pipeline of a control connection accepted over the cap: it answers 503 at once, shuts
/// its side of the connection, and reads and drops what the client sends until the client closes
/// or `linger` has passed. Closing at once would let the client's write of its request fail before
/// it reads the 503 that says why (afproxyctl would then report a broken pipe, not the limit).
final class OverCapacityHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limit: Int
    private let linger: TimeAmount
    private var answered = false
    private var timer: Scheduled<Void>?

    init(limit: Int, linger: TimeAmount = ControlLimits.refusalLinger) {
        self.limit = limit
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
        let refusal = ControlRefusal(
            .serviceUnavailable,
            "the control socket is at its limit of \(self.limit) connections; close one and retry")
        let channel = context.channel
        context.writeAndFlush(self.wrapOutboundOut(refusal.bytes())).whenComplete { _ in
            // A channel that cannot half-close (not a socket) is closed outright.
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
        }
        self.timer = context.eventLoop.scheduleTask(in: self.linger) { channel.close(promise: nil) }
    }
}

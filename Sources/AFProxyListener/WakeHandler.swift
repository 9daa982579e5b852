import NIOCore

/// Stands in for a shed `ClientCodec` (see there) while its connection is idle: the first bytes
/// that arrive put fresh codec handlers back, before the connection handler, and go on to them;
/// then it leaves. Everything else passes through as it would have passed the codec of an idle
/// connection.
///
/// The old decoder leaves the pipeline a loop turn after it was told to (`ByteToMessageHandler`
/// finishes its removal in an `execute`); bytes that arrive before then are held here, and go on
/// once it has left, so that they never meet it.
final class WakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let codec: ClientCodec
    private let handler: any ChannelHandler
    private var context: ChannelHandlerContext?
    /// The old codec has left: bytes can go to a new one.
    private var codecLeft = false
    private var held: ByteBuffer?
    private var woken = false

    init(codec: ClientCodec, handler: any ChannelHandler) {
        self.codec = codec
        self.handler = handler
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.woken else { return context.fireChannelRead(data) }
        var bytes = Self.unwrapInboundIn(data)
        guard self.codecLeft else {
            if self.held == nil { self.held = bytes } else { self.held!.writeBuffer(&bytes) }
            return
        }
        self.wake(context, with: bytes)
    }

    /// The old codec's decoder has left the pipeline.
    func oldCodecLeft() {
        self.codecLeft = true
        guard let held = self.held, let context = self.context else { return }
        self.held = nil
        self.wake(context, with: held)
    }

    private func wake(_ context: ChannelHandlerContext, with bytes: ByteBuffer) {
        self.woken = true
        do {
            try self.codec.install(in: context.pipeline.syncOperations, before: self.handler)
        } catch {
            context.close(promise: nil)
            return
        }
        // Through the fresh handlers (they follow this one), then out of the way.
        context.fireChannelRead(Self.wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

import NIOCore

/// Holds back a client's half-close while the HTTP decoder leaves the pipeline after a CONNECT.
/// The decoder forwards the bytes it still holds (what the client sent right behind its CONNECT)
/// only if it has not seen the end of input; NIO drops them otherwise. And NIO reads a FIN in
/// the same loop turn as the data before it, ahead of the decoder's removal: without this gate a
/// client that sends its bytes and its FIN without waiting for the 200 would lose the bytes.
final class InputClosedGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var context: ChannelHandlerContext?
    private var held = false

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent {
            self.held = true
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// The decoder is gone: lets a held half-close through, then leaves.
    func open() {
        guard let context = self.context else { return }
        if self.held { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

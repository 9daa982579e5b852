import AFProxyModel
import NIOCore

/// Runs `UpstreamProxyHandshake` on the fresh connection to the upstream proxy: sends the opening,
/// feeds it the answer, sends what it says, and leaves the pipeline once the tunnel is open,
/// handing over what came after the answer (the origin's first bytes) with `completion`.
/// Loop-confined; `completion` is called once.
final class UpstreamProxyHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var handshake: UpstreamProxyHandshake
    private var completion: ((Result<ByteBuffer?, TaskFailure>) -> Void)?

    init(_ handshake: UpstreamProxyHandshake, completion: @escaping (Result<ByteBuffer?, TaskFailure>) -> Void) {
        self.handshake = handshake
        self.completion = completion
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.send(self.handshake.opening(), context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard self.completion != nil else { return context.fireChannelRead(data) }
        let buffer = self.unwrapInboundIn(data)
        switch self.handshake.receive(buffer.readableBytesView) {
        case .wait:
            break
        case .send(let bytes):
            self.send(bytes, context: context)
        case .established(let leftover):
            let completion = self.completion
            self.completion = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            completion?(.success(leftover.isEmpty ? nil : context.channel.allocator.buffer(bytes: leftover)))
        case .failed(let failure):
            self.fail(failure, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.fail(self.handshake.closed(), context: context)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.fail(
            .upstreamProxyRefused("upstream proxy connection failed during the handshake: \(error)"), context: context)
    }

    private func send(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    private func fail(_ failure: TaskFailure, context: ChannelHandlerContext) {
        guard let completion = self.completion else { return }
        self.completion = nil
        context.close(promise: nil)
        completion(.failure(failure))
    }
}

import NIOCore
import NIOTLS

/// Waits on a tunnel's upstream connection for its TLS handshake, behind the handlers of a
/// `TunnelTLSMaker`, and reports once: completed, or the error (a certificate that does not
/// verify, a pin that does not match) or the close that came first. It leaves once done.
final class TLSHandshakeWait: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private var done: ((Result<Void, any Error>) -> Void)?

    init(done: @escaping (Result<Void, any Error>) -> Void) {
        self.done = done
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.handshakeCompleted) = event as? TLSUserEvent {
            self.report(.success(()))
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.report(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.report(.failure(ChannelError.eof))
        context.fireChannelInactive()
    }

    private func report(_ result: Result<Void, any Error>) {
        let done = self.done
        self.done = nil
        done?(result)
    }
}

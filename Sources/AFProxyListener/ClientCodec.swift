import AFProxyRules
import NIOCore
import NIOHTTP1

/// The HTTP handlers of a client connection between the bytes and `ProxyConnectionHandler`: the
/// response encoder, the request decoder and its `UpgradeDeclineHandler`, the response head
/// validator and the parser-error handler. A connection idle for a while sheds them (`shed`), for a `WakeHandler` that puts
/// fresh ones back when the next bytes arrive (`restore`): an idle keep-alive connection then
/// holds neither their pipeline slots nor the decoder's buffer, about 0.8 KiB together. They
/// keep no state from one request to the next once the decoder has let its parser go, which is
/// when the connection handler sheds them.
final class ClientCodec {
    /// The request decoder: one for the connection's life, its parser made and let go as needed.
    let decoder: RequestDecoder
    /// With proxy authentication, a `ProxyAuthGate` goes last.
    let authenticator: ProxyAuthenticator?
    /// The handlers in the pipeline now; empty while shed.
    private var installed: [any RemovableChannelHandler] = []

    init(decoder: RequestDecoder, authenticator: ProxyAuthenticator? = nil) {
        self.decoder = decoder
        self.authenticator = authenticator
    }

    var isShed: Bool { self.installed.isEmpty }

    /// Adds the handlers at the end of `pipeline`, or before `handler`.
    func install(in pipeline: ChannelPipeline.SynchronousOperations, before handler: (any ChannelHandler)? = nil) throws
    {
        var handlers: [any RemovableChannelHandler] = [
            ClientResponseEncoder(), ByteToMessageHandler(self.decoder), UpgradeDeclineHandler(decoder: self.decoder),
            NIOHTTPResponseHeadersValidator(),
            ProxyErrorHandler(),
        ]
        if let authenticator = self.authenticator { handlers.append(ProxyAuthGate(authenticator: authenticator)) }
        for added in handlers {
            if let handler {
                try pipeline.addHandler(added, position: .before(handler))
            } else {
                try pipeline.addHandler(added)
            }
        }
        self.installed = handlers
    }

    /// Takes the handlers out and puts a `WakeHandler` in their place, in front of them, so that
    /// bytes reach it before the decoder, which leaves a loop turn later.
    func shed(
        from pipeline: ChannelPipeline.SynchronousOperations, before handler: any ChannelHandler,
        on eventLoop: any EventLoop
    ) throws {
        guard let first = self.installed.first else { return }
        let wake = WakeHandler(codec: self, handler: handler)
        try pipeline.addHandler(wake, position: .before(first))
        let decoderLeft = eventLoop.makePromise(of: Void.self)
        for removed in self.installed {
            pipeline.removeHandler(
                removed, promise: removed is ByteToMessageHandler<RequestDecoder> ? decoderLeft : nil)
        }
        self.installed = []
        decoderLeft.futureResult.assumeIsolated().whenComplete { _ in wake.oldCodecLeft() }
    }
}

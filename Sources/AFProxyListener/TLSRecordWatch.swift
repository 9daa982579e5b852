import NIOCore

/// Right in front of the TLS server handler of an intercepted connection until its handshake
/// ends: reads the records both ways as they pass (`HandshakeRecords`), so that a failed
/// handshake is judged by what was sent rather than by BoringSSL's error alone.
final class TLSRecordWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private(set) var records = HandshakeRecords()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.records.client.scan(self.unwrapInboundIn(data).readableBytesView)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        self.records.server.scan(self.unwrapOutboundIn(data).readableBytesView)
        context.write(data, promise: promise)
    }
}

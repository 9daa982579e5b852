#if Interception
import AFProxyManager
import AFProxyServerKit
import NIOCore
import NIOHTTP2

/// An intercepted connection whose client chose HTTP/2: swift-nio-http2's connection handler
/// with its streams in line, each stream channel running the HTTP/1 request handling of any
/// intercepted connection behind NIO's HTTP/2-to-HTTP/1 codec. So every stream is a task of its
/// own with the CONNECT's stream task as parent, and rules, holds, records and throttles see it as
/// they see a request over HTTP/1.1. A suspended task holds its stream channel's reads (its
/// window) and its writes, never the connection's.
///
/// The connection's lifetime is NIO's `NIOHTTP2ServerConnectionManagementHandler`: GOAWAY and
/// a close once the streams ended when the listener stops gracefully (`ChannelShouldQuiesceEvent`)
/// or after `idle-timeout` without a stream, in place of the HTTP/1 timers, which read bytes
/// that are frames here.
extension InterceptSetup {
    /// Streams a client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS): browsers and
    /// h2load use up to 100.
    static let maxConcurrentStreams = 100

    func installHTTP2(on channel: any Channel, task: StreamTask) throws {
        let pipeline = channel.pipeline.syncOperations
        if let timer = try? pipeline.handler(type: ConnectionTimeoutHandler.self) {
            pipeline.removeHandler(timer, promise: nil)
        }
        let lifetime = NIOHTTP2ServerConnectionManagementHandler(
            eventLoop: channel.eventLoop,
            configuration: .init(
                maxIdleTime: TimeAmount(self.configuration.idleTimeout), maxAge: nil, maxGraceTime: nil,
                keepalive: nil))
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: Self.maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: self.limits.maxHeaderListSize),
        ]
        let carrier = RequestCarrier(task: task, proxyUser: task.request.proxyUser)
        let validator = self.validator(for: task.request, http2: true)
        _ = try pipeline.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: connection, streamConfiguration: .init(),
            streamDelegate: HTTP2StreamLedger(passingTo: lifetime.http2StreamDelegate)
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try self.addStreamHandlers(to: stream.pipeline.syncOperations, validator: validator, carrier: carrier)
            }
        }
        try pipeline.addHandler(lifetime)
        self.http2Connections?.add(channel)
        // It starts its idle timer when the channel becomes active, which this one was long ago.
        try pipeline.context(handlerType: NIOHTTP2Handler.self).fireChannelActive()
    }

    /// `body-timeout` for one stream, as a request body on HTTP/1 is timed: the connection
    /// handler's phases drive it and its `BodySilent` is answered 408. Its idle and head timers
    /// must never fire here (the head came whole with the stream, the connection's lifetime is the
    /// management handler's, and the head timer's 408 is HTTP/1 bytes, which a stream cannot
    /// take), so they are set past any connection's life.
    func streamTimeoutHandler() -> ConnectionTimeoutHandler {
        ConnectionTimeoutHandler(
            idleTimeout: Self.never, requestTimeout: Self.never, bodyTimeout: TimeAmount(self.configuration.bodyTimeout)
        ) { ByteBuffer() }
    }

    /// Longer than any connection lives (a year).
    static let never = TimeAmount.hours(24 * 365)

    /// One stream's handlers: its head made an HTTP/1 head (`HTTP2RequestFraming` first), and the
    /// connection handler of any intercepted request. Its codec is never installed: a stream
    /// carries no HTTP/1 bytes to decode.
    private func addStreamHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, validator: RequestValidator, carrier: RequestCarrier
    ) throws {
        try pipeline.addHandler(self.streamTimeoutHandler())
        try pipeline.addHandler(HTTP2RequestFraming())
        try pipeline.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
        try pipeline.addHandler(
            ProxyConnectionHandler(
                manager: self.manager, validator: validator, clientAddress: self.clientAddress,
                codec: ClientCodec(decoder: RequestDecoder(limits: self.limits)), clientProcess: self.clientProcess,
                carrier: carrier, overStream: true))
    }
}
#endif

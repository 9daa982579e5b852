import AFProxyManager
import NIOCore
import NIOHTTP1

/// What the two NDJSON feeds share: their life on the connection, behind `ControlHandler`, which
/// wrote the answer's head. Added, a feed subscribes to the session's events, ticks every 250 ms
/// on the connection's event loop and is listed with the graceful stop; the stop ends it with the
/// last chunk (`ControlStreams.endAll`), a closed connection or its removal just stops it. A feed
/// (`EventStreamHandler`, `LiveFeedHandler`) says what it subscribes to and what a tick writes.
class NDJSONFeedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let manager: SessionManager
    /// Where the feed is listed, so that a graceful stop ends it with its last chunk.
    private let streams: ControlStreams?
    /// Whether the first tick comes at once rather than after the first interval.
    private let ticksAtStart: Bool
    private let writer = NDJSONWriter()
    private(set) var context: ChannelHandlerContext?
    private var token: Int?
    private var ticker: RepeatedTask?

    init(manager: SessionManager, streams: ControlStreams?, ticksAtStart: Bool) {
        self.manager = manager
        self.streams = streams
        self.ticksAtStart = ticksAtStart
    }

    /// The feed's subscription to the session's events, made when it is added; answers its token.
    func subscribe(context: ChannelHandlerContext) -> Int {
        preconditionFailure("a feed subscribes to what it shows")
    }

    /// Every 250 ms on the connection's event loop, while the feed runs.
    func tick() {}

    /// Whether the feed still writes: not once it stopped or left the pipeline.
    var isRunning: Bool { self.token != nil && self.context != nil }

    /// One line of the feed, unless it stopped.
    func write(_ json: [UInt8]) {
        guard self.token != nil, let context = self.context else { return }
        self.writer.write(json, context: context)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.token = self.subscribe(context: context)
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        if self.ticksAtStart { self.tick() }
        self.ticker = context.eventLoop.scheduleRepeatedTask(
            initialDelay: .milliseconds(250), delay: .milliseconds(250)
        ) { _ in
            loopBound.value.tick()
        }
        if self.streams?.add(context.channel) == false { self.end(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.stop()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stop()
        self.writer.close()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        context.fireChannelWritabilityChanged()
    }

    /// The daemon stops (`ControlStreams.endAll`).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ControlStreamEnd else { return context.fireUserInboundEventTriggered(event) }
        self.end(context)
    }

    private func end(_ context: ChannelHandlerContext) {
        self.stop()
        self.writer.end(context: context)
    }

    private func stop() {
        if let token { self.manager.events.unsubscribe(token) }
        self.token = nil
        self.ticker?.cancel()
        self.ticker = nil
    }
}

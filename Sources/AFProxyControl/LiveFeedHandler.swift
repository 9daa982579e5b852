import AFProxyAPI
import AFProxyManager
import AFProxyModel
import NIOCore
import NIOHTTP1

/// The body of `GET /v1/live`: a `LiveSnapshot` line every 250 ms when something changed (and at
/// least once a second for the totals). Its cost follows the live tasks that moved, not the
/// request rate: completions are collected as records from the bus (no encoding) and at most
/// `LiveCompletions.limit` of them go out per line. A reader that stops reading is skipped until
/// its socket drains and then gets everything since its last line, so it costs nothing to hold.
/// It sits behind `ControlHandler`, which wrote the answer's head.
final class LiveFeedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let manager: SessionManager
    private let extraStats: @Sendable (inout SessionStats) -> Void
    /// Where the feed is listed, so that a graceful stop ends it with its last chunk.
    private let streams: ControlStreams?
    private let writer = NDJSONWriter()
    private let completions = Locked(LiveCompletions())
    private var changes = LiveChanges()
    private var context: ChannelHandlerContext?
    private var token: Int?
    private var ticker: RepeatedTask?

    init(
        manager: SessionManager, extraStats: @escaping @Sendable (inout SessionStats) -> Void,
        streams: ControlStreams?
    ) {
        self.manager = manager
        self.extraStats = extraStats
        self.streams = streams
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let completions = self.completions
        self.token = self.manager.events.subscribe([.completed]) { event in
            completions.withLock { $0.append(event.task) }
        }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        self.tick()
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

    private func tick() {
        guard self.token != nil, let context = self.context, context.channel.isWritable else { return }
        let records = self.manager.tasks(includeHistory: false)
        let pending = self.completions.withLock { $0.count }
        guard let next = self.changes.next(live: records, completions: pending) else { return }
        let completed = self.completions.withLock { $0.take() }
        var stats = self.manager.stats()
        self.extraStats(&stats)
        let snapshot = LiveSnapshot(
            tasks: next.tasks, live: next.live, completed: completed.records,
            completedNotShown: completed.notShown, stats: stats)
        var json: [UInt8] = []
        json.reserveCapacity((snapshot.tasks.count + snapshot.completed.count) * 1024 + 512)
        snapshot.writeJSON(to: &json)
        self.changes.sent(records)
        self.writer.write(json, context: context)
    }
}

import AFProxyManager
import AFProxyModel
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// The body of `GET /v1/live`: a `LiveSnapshot` line every 250 ms when something changed (and at
/// least once a second for the totals). Its cost follows the live tasks that moved, not the
/// request rate: completions are collected as records from the bus (no encoding) and at most
/// `LiveCompletions.limit` of them go out per line. A reader that stops reading is skipped until
/// its socket drains and then gets everything since its last line, so it costs nothing to hold.
final class LiveFeed {
    private let manager: SessionManager
    private let context: ChannelHandlerContext
    private let extraStats: @Sendable (inout SessionStats) -> Void
    private let completions = Locked(LiveCompletions())
    private var changes = LiveChanges()
    private var token: Int?
    private var ticker: RepeatedTask?

    init(
        manager: SessionManager, context: ChannelHandlerContext,
        extraStats: @escaping @Sendable (inout SessionStats) -> Void
    ) {
        self.manager = manager
        self.context = context
        self.extraStats = extraStats
        let completions = self.completions
        self.token = manager.events.subscribe([.completed]) { event in
            completions.withLock { $0.append(event.task) }
        }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        self.tick()
        self.ticker = context.eventLoop.scheduleRepeatedTask(
            initialDelay: .milliseconds(250), delay: .milliseconds(250)
        ) { _ in
            loopBound.value.tick()
        }
    }

    func stop() {
        if let token { self.manager.events.unsubscribe(token) }
        self.token = nil
        self.ticker?.cancel()
        self.ticker = nil
    }

    private func tick() {
        guard self.token != nil, self.context.channel.isWritable else { return }
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
        var buffer = self.context.channel.allocator.buffer(capacity: json.count + 1)
        buffer.writeBytes(json)
        buffer.writeString("\n")
        self.context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
    }
}

import AFProxyAPI
import AFProxyManager
import AFProxyModel
import NIOCore

/// The body of `GET /v1/live`: a `LiveSnapshot` line every 250 ms when something changed (and at
/// least once a second for the totals). Its cost follows the live tasks that moved, not the
/// request rate: completions are collected as records from the bus (no encoding) and at most
/// `LiveCompletions.limit` of them go out per line. A reader that stops reading is skipped until
/// its socket drains and then gets everything since its last line, so it costs nothing to hold.
final class LiveFeedHandler: NDJSONFeedHandler {
    private let extraStats: @Sendable (inout SessionStats) -> Void
    private let completions = Locked(LiveCompletions())
    private var changes = LiveChanges()

    init(
        manager: SessionManager, extraStats: @escaping @Sendable (inout SessionStats) -> Void,
        streams: ControlStreams?
    ) {
        self.extraStats = extraStats
        super.init(manager: manager, streams: streams, ticksAtStart: true)
    }

    override func subscribe(context: ChannelHandlerContext) -> Int {
        let completions = self.completions
        return self.manager.events.subscribe([.completed]) { event in
            completions.withLock { $0.append(event.task) }
        }
    }

    override func tick() {
        guard self.isRunning, self.context?.channel.isWritable == true else { return }
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
        self.write(json)
    }
}

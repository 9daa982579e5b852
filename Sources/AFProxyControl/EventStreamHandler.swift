import AFProxyAPI
import AFProxyManager
import AFProxyModel
import FoundationEssentials
import NIOCore

/// The body of `GET /v1/events`: every event the session publishes, the network watcher's
/// `network-lost` / `network-restored`, and `progress` for each live task whose byte counts
/// moved, at most four times a second. Events arrive on the publishing thread and are written on
/// the connection's event loop. A reader that stops reading costs a fixed amount of memory
/// (`EventDelivery`): what it cannot take is dropped, counted, and reported as one `missed` line
/// when it reads again, so a dashboard in a background tab or a paused `watch` neither grows the
/// daemon nor loses track silently.
final class EventStreamHandler: NDJSONFeedHandler {
    /// Events waiting for the event loop, per reader. Publishing can outpace a busy loop for a
    /// moment (a burst of completions); beyond this they count as missed rather than queue.
    static let capacity = 256

    private let encoder = JSONEncoder.api()
    private let delivery = Locked(EventDelivery(capacity: EventStreamHandler.capacity))
    private var lastProgress: [Int: (Int64, Int64)] = [:]

    init(manager: SessionManager, streams: ControlStreams?) {
        super.init(manager: manager, streams: streams, ticksAtStart: false)
    }

    override func subscribe(context: ChannelHandlerContext) -> Int {
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let delivery = self.delivery
        return self.manager.events.subscribeStream { event in
            guard delivery.withLock({ $0.offer() }) else { return }
            eventLoop.execute { loopBound.value.deliver(event) }
        }
    }

    /// The socket drained below NIO's low watermark (or filled above its high one).
    override func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let missed = self.delivery.withLock({ $0.becameWritable() }) {
            self.write(.missed(MissedEvents(missed)))
        }
        context.fireChannelWritabilityChanged()
    }

    private func deliver(_ event: StreamEvent) {
        let writable = self.context?.channel.isWritable ?? false
        switch self.delivery.withLock({ $0.dequeue(writable: writable) }) {
        case .drop:
            break
        case .write:
            self.write(event)
        case .writeAfterMissed(let missed):
            self.write(.missed(MissedEvents(missed)))
            self.write(event)
        }
    }

    /// Progress is a snapshot: a reader that cannot take it now gets the state of the moment at
    /// its next tick instead, so skipped ticks are not counted as missed.
    override func tick() {
        guard self.context?.channel.isWritable == true else { return }
        var seen: [Int: (Int64, Int64)] = [:]
        for record in self.manager.tasks(includeHistory: false) where record.state != .completed {
            let counts = (record.upload.completed, record.download.completed)
            seen[record.id] = counts
            if let last = self.lastProgress[record.id], last == counts { continue }
            if self.lastProgress[record.id] == nil && counts == (0, 0) { continue }
            self.write(.task(TaskEvent(.progress, task: record)))
        }
        self.lastProgress = seen
    }

    /// Task events, two per proxied request, are written by hand (`TaskEvent+JSON`); the rare
    /// others through the API's encoder.
    private func write(_ event: StreamEvent) {
        guard self.isRunning else { return }
        var json: [UInt8] = []
        if case .task(let taskEvent) = event {
            taskEvent.writeJSON(to: &json)
        } else {
            guard let encoded = try? self.encoder.encode(event) else { return }
            json.append(contentsOf: encoded)
        }
        self.write(json)
    }
}

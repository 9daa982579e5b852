import AFProxyManager
import AFProxyModel
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// The body of `GET /v1/events`: every event the session publishes, the network watcher's
/// `network-lost` / `network-restored`, and `progress` for each live task whose byte counts
/// moved, at most four times a second. Events arrive on the publishing thread and are written on
/// the connection's event loop. A reader that stops reading costs a fixed amount of memory
/// (`EventDelivery`): what it cannot take is dropped, counted, and reported as one `missed` line
/// when it reads again, so a dashboard in a background tab or a paused `watch` neither grows the
/// daemon nor loses track silently.
final class EventStream {
    /// Events waiting for the event loop, per reader. Publishing can outpace a busy loop for a
    /// moment (a burst of completions); beyond this they count as missed rather than queue.
    static let capacity = 256

    private let manager: SessionManager
    private let context: ChannelHandlerContext
    private let encoder: JSONEncoder
    private let delivery = Locked(EventDelivery(capacity: EventStream.capacity))
    private var token: Int?
    private var ticker: RepeatedTask?
    private var lastProgress: [Int: (Int64, Int64)] = [:]
    /// One flush for the events written in one turn of the event loop: a flush per event was a
    /// writev per event, as much CPU as encoding them.
    private var flushScheduled = false

    init(manager: SessionManager, context: ChannelHandlerContext) {
        self.manager = manager
        self.context = context
        self.encoder = JSONEncoder()
        self.encoder.dateEncodingStrategy = .iso8601
        self.encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let delivery = self.delivery
        self.token = manager.events.subscribeStream { event in
            guard delivery.withLock({ $0.offer() }) else { return }
            eventLoop.execute { loopBound.value.deliver(event) }
        }
        self.ticker = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(250), delay: .milliseconds(250)) { _ in
            loopBound.value.tick()
        }
    }

    func stop() {
        if let token { self.manager.events.unsubscribe(token) }
        self.token = nil
        self.ticker?.cancel()
        self.ticker = nil
    }

    /// The socket drained below NIO's low watermark (or filled above its high one).
    func writabilityChanged() {
        guard self.context.channel.isWritable, let missed = self.delivery.withLock({ $0.becameWritable() }) else {
            return
        }
        self.write(.missed(MissedEvents(missed)))
    }

    private func deliver(_ event: StreamEvent) {
        let writable = self.context.channel.isWritable
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
    private func tick() {
        guard self.context.channel.isWritable else { return }
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

    private func write(_ event: StreamEvent) {
        guard self.token != nil else { return }
        var json: [UInt8] = []
        if case .task(let taskEvent) = event {
            taskEvent.writeJSON(to: &json)
        } else {
            guard let encoded = try? self.encoder.encode(event) else { return }
            json.append(contentsOf: encoded)
        }
        var buffer = self.context.channel.allocator.buffer(capacity: json.count + 1)
        buffer.writeBytes(json)
        buffer.writeString("\n")
        self.context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
        guard !self.flushScheduled else { return }
        self.flushScheduled = true
        let loopBound = NIOLoopBound(self, eventLoop: self.context.eventLoop)
        self.context.eventLoop.execute {
            let stream = loopBound.value
            stream.flushScheduled = false
            if stream.token != nil { stream.context.flush() }
        }
    }
}

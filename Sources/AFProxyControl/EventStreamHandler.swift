import AFProxyAPI
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
/// daemon nor loses track silently. It sits behind `ControlHandler`, which wrote the answer's head.
final class EventStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Events waiting for the event loop, per reader. Publishing can outpace a busy loop for a
    /// moment (a burst of completions); beyond this they count as missed rather than queue.
    static let capacity = 256

    private let manager: SessionManager
    /// Where the stream is listed, so that a graceful stop ends it with its last chunk.
    private let streams: ControlStreams?
    private let writer = NDJSONWriter()
    private let encoder = JSONEncoder.api()
    private let delivery = Locked(EventDelivery(capacity: EventStreamHandler.capacity))
    private var context: ChannelHandlerContext?
    private var token: Int?
    private var ticker: RepeatedTask?
    private var lastProgress: [Int: (Int64, Int64)] = [:]

    init(manager: SessionManager, streams: ControlStreams?) {
        self.manager = manager
        self.streams = streams
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let delivery = self.delivery
        self.token = self.manager.events.subscribeStream { event in
            guard delivery.withLock({ $0.offer() }) else { return }
            eventLoop.execute { loopBound.value.deliver(event) }
        }
        self.ticker = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(250), delay: .milliseconds(250)) { _ in
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

    /// The socket drained below NIO's low watermark (or filled above its high one).
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let missed = self.delivery.withLock({ $0.becameWritable() }) {
            self.write(.missed(MissedEvents(missed)))
        }
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
    private func tick() {
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
        guard self.token != nil, let context = self.context else { return }
        var json: [UInt8] = []
        if case .task(let taskEvent) = event {
            taskEvent.writeJSON(to: &json)
        } else {
            guard let encoded = try? self.encoder.encode(event) else { return }
            json.append(contentsOf: encoded)
        }
        self.writer.write(json, context: context)
    }
}

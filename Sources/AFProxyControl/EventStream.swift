import AFProxyManager
import AFProxyModel
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// The body of `GET /v1/events`: every event the session publishes, the network watcher's
/// `network-lost` / `network-restored`, and `progress` for each live task whose byte counts
/// moved, at most four times a second. Events arrive on the publishing
/// thread and are written on the connection's event loop; a reader too slow to keep the socket
/// writable is disconnected rather than buffered without bound.
final class EventStream {
    private let manager: SessionManager
    private let context: ChannelHandlerContext
    private let encoder: JSONEncoder
    private var token: Int?
    private var ticker: RepeatedTask?
    private var lastProgress: [Int: (Int64, Int64)] = [:]

    init(manager: SessionManager, context: ChannelHandlerContext) {
        self.manager = manager
        self.context = context
        self.encoder = JSONEncoder()
        self.encoder.dateEncodingStrategy = .iso8601
        self.encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        self.token = manager.events.subscribeStream { event in
            eventLoop.execute { loopBound.value.write(event) }
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

    private func tick() {
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
        guard self.context.channel.isWritable else {
            self.stop()
            self.context.close(promise: nil)
            return
        }
        guard let json = try? self.encoder.encode(event) else { return }
        var buffer = self.context.channel.allocator.buffer(capacity: json.count + 1)
        buffer.writeBytes(json)
        buffer.writeString("\n")
        self.context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
    }
}

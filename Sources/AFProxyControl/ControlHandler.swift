import AFProxyManager
import AFProxyModel
import Dispatch
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// One control connection: HTTP/1.1 requests in, JSON out; `GET /v1/events` turns the connection
/// into a stream of events, one JSON object a line, until the client hangs up. It tells
/// `ControlTimeoutHandler` when a request has arrived and when its answer ends (`ControlPhase`).
final class ControlHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let manager: SessionManager
    private let caller: ControlCaller
    private let extraStats: @Sendable (inout SessionStats) -> Void
    /// The Prometheus text and its content type for `GET /metrics`; nil: 404.
    private let metrics: ControlServer.Metrics?
    /// What `GET /v1/web` answers; nil: web-listen is off.
    private let web: @Sendable () -> WebAddress?
    private let encoder: JSONEncoder
    private var request: HTTPRequestHead?
    /// The request's body (`ControlBodyLimitHandler` bounds it).
    private(set) var body = ByteBuffer()
    private var stream: EventStream?
    private var feed: LiveFeed?
    /// Where a streaming connection is listed, so that a graceful stop ends it with its last chunk.
    private let streams: ControlStreams?

    init(
        manager: SessionManager, caller: ControlCaller, extraStats: @escaping @Sendable (inout SessionStats) -> Void,
        metrics: ControlServer.Metrics? = nil, web: @escaping @Sendable () -> WebAddress? = { nil },
        streams: ControlStreams? = nil
    ) {
        self.streams = streams
        self.manager = manager
        self.caller = caller
        self.web = web
        self.extraStats = extraStats
        self.metrics = metrics
        self.encoder = JSONEncoder()
        self.encoder.dateEncodingStrategy = .iso8601
        self.encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.request = head
            self.body.clear()
        case .body(var part):
            self.body.writeBuffer(&part)
        case .end:
            guard let head = self.request, self.stream == nil, self.feed == nil else { return }
            self.request = nil
            context.triggerUserOutboundEvent(ControlPhase.requestReceived, promise: nil)
            self.respond(to: head, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        self.stream?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stream?.stop()
        self.stream = nil
        self.feed?.stop()
        self.feed = nil
        context.fireChannelInactive()
    }

    /// The daemon stops (`ControlStreams.endAll`): a stream ends with its last chunk, so that its
    /// reader sees a clean end, and the connection closes.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ControlStreamEnd else { return context.fireUserInboundEventTriggered(event) }
        self.endStream(context)
    }

    private func endStream(_ context: ChannelHandlerContext) {
        guard self.stream != nil || self.feed != nil else { return }
        self.stream?.stop()
        self.stream = nil
        self.feed?.stop()
        self.feed = nil
        context.writeAndFlush(self.wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        if case .socket(let peer) = self.caller, !(peer?.isAllowed() ?? false) {
            let who = peer.map { "uid \($0.uid)" } ?? "an unidentified peer"
            self.send(
                status: .forbidden, ControlErrorBody(error: "\(who) may not use this control socket"), head, context)
            return
        }
        switch ControlRoute.parse(method: head.method.rawValue, target: head.uri) {
        case .failure(let refusal):
            self.send(
                status: HTTPResponseStatus(statusCode: refusal.status), ControlErrorBody(error: refusal.message), head,
                context)
        case .success(.listTasks(let includeHistory)):
            self.send(status: .ok, TaskList(tasks: self.manager.tasks(includeHistory: includeHistory)), head, context)
        case .success(.task(let id)):
            if let record = self.manager.task(id: id) {
                self.send(status: .ok, record, head, context)
            } else {
                self.send(status: .notFound, ControlErrorBody(error: "no task with id \(id)"), head, context)
            }
        case .success(.verb(let verb, let id)):
            do throws(ControlError) {
                let record: TaskRecord
                switch verb {
                case .suspend: record = try self.manager.suspend(id: id)
                case .resume: record = try self.manager.resume(id: id)
                case .cancel: record = try self.manager.cancel(id: id)
                }
                self.send(status: .ok, record, head, context)
            } catch {
                switch error {
                case .unknownTask:
                    self.send(status: .notFound, ControlErrorBody(error: "no task with id \(id)"), head, context)
                case .illegal(let transition):
                    self.send(status: .conflict, ControlErrorBody(error: "task \(id): \(transition)"), head, context)
                }
            }
        case .success(.verbAll(let verb)):
            let changed = verb == .suspend ? self.manager.suspendAll() : self.manager.resumeAll()
            self.send(status: .ok, TaskList(tasks: changed), head, context)
        case .success(.startDownload):
            self.startDownload(head, context)
        case .success(.holds(let route)):
            self.holds(route, head, context)
        case .success(.pin(let host, let port)):
            // The handshake blocks: it runs off the event loop, and the answer comes back to it.
            let manager = self.manager
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            DispatchQueue.global().async {
                let result = manager.probePin(host: host, port: port)
                loopBound.eventLoop.execute {
                    let (handler, context) = loopBound.value
                    switch result {
                    case .success(let pin):
                        handler.send(status: .ok, PinAnswer(host: host, port: port, pin: pin), head, context)
                    case .failure(let failure):
                        handler.send(
                            status: .badGateway, ControlErrorBody(error: "\(failure.message) (\(failure.code))"), head,
                            context)
                    }
                }
            }
        case .success(.har(let includeHistory, let ids)):
            var tasks = ids.isEmpty ? self.manager.tasks(includeHistory: includeHistory) : []
            for id in ids where !tasks.contains(where: { $0.id == id }) {
                guard let record = self.manager.task(id: id) else {
                    return self.send(status: .notFound, ControlErrorBody(error: "no task with id \(id)"), head, context)
                }
                tasks.append(record)
            }
            let log = HARLog(tasks: tasks, now: Date()) { HTTPResponseStatus(statusCode: $0).reasonPhrase }
            self.send(status: .ok, HARDocument(log: log), head, context)
        case .success(.stats):
            var stats = self.manager.stats()
            self.extraStats(&stats)
            self.send(status: .ok, stats, head, context)
        case .success(.status):
            var stats = self.manager.stats()
            self.extraStats(&stats)
            let status = DaemonStatus(
                version: stats.version, uptimeSeconds: stats.uptimeSeconds, network: self.manager.reachability,
                tasks: stats)
            self.send(status: .ok, status, head, context)
        case .success(.metrics):
            guard let metrics = self.metrics else {
                return self.send(status: .notFound, ControlErrorBody(error: "metrics are not enabled"), head, context)
            }
            self.sendText(metrics.exposition(), contentType: metrics.contentType, head, context)
        case .success(.web):
            guard let web = self.web() else {
                let message = "the web dashboard is off: start afproxy with --web 127.0.0.1:PORT (key web-listen)"
                return self.send(status: .notFound, ControlErrorBody(error: message), head, context)
            }
            self.send(status: .ok, web, head, context)
        case .success(.throttle(let route)):
            let (status, answer) = ThrottleEndpoint.answer(route, body: self.body, manager: self.manager)
            self.send(status: HTTPResponseStatus(statusCode: status), answer, head, context)
        case .success(.events):
            self.startStreaming(head, context)
            self.stream = EventStream(manager: self.manager, context: context)
            if self.streams?.add(context.channel) == false { self.endStream(context) }
        case .success(.live):
            self.startStreaming(head, context)
            self.feed = LiveFeed(manager: self.manager, context: context, extraStats: self.extraStats)
            if self.streams?.add(context.channel) == false { self.endStream(context) }
        }
    }

    /// The head of an answer that lasts as long as its reader: one JSON object a line.
    private func startStreaming(_ head: HTTPRequestHead, _ context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/x-ndjson")
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "Date", value: HTTPDate.now())
        context.writeAndFlush(
            self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
            promise: nil)
    }

    private func startDownload(_ head: HTTPRequestHead, _ context: ChannelHandlerContext) {
        let request: DownloadRequestBody
        do {
            request = try JSONDecoder().decode(DownloadRequestBody.self, from: Data(self.body.readableBytesView))
        } catch {
            let message = #"expected a JSON object {"url": …, "path": …, "headers": […], "sha256": …}"#
            return self.send(status: .badRequest, ControlErrorBody(error: message), head, context)
        }
        var headers: HTTPHeaderList = []
        for line in request.headers ?? [] {
            guard let field = HTTPHeaderField(line: line) else {
                let message = "a header must be \"Name: value\" with a token for its name, not \(line.prefix(100))"
                return self.send(status: .badRequest, ControlErrorBody(error: message), head, context)
            }
            headers.append(field)
        }
        let who = self.caller.name
        let spec = DownloadSpec(
            url: request.url, headers: headers, path: request.path, sha256: request.sha256,
            force: request.force ?? false, keepPartial: request.keepPartial ?? false, pins: request.pins,
            insecure: request.insecure ?? false, client: who)
        do throws(DownloadRefusal) {
            self.send(status: .created, try self.manager.startDownload(spec), head, context)
        } catch {
            self.send(
                status: HTTPResponseStatus(statusCode: error.status), ControlErrorBody(error: error.message), head,
                context)
        }
    }

    private func sendText(
        _ bytes: [UInt8], contentType: String, _ request: HTTPRequestHead, _ context: ChannelHandlerContext
    ) {
        var body = ByteBuffer()
        body.writeBytes(bytes)
        self.send(status: .ok, body: body, contentType: contentType, request, context)
    }

    func send(
        status: HTTPResponseStatus, _ value: some Encodable, _ request: HTTPRequestHead,
        _ context: ChannelHandlerContext
    ) {
        var body = ByteBuffer()
        var bytes: [UInt8] = []
        // Task records, by far the largest bodies, are written without Codable (TaskRecord+JSON).
        if let list = value as? TaskList {
            bytes.reserveCapacity(list.tasks.count * 1024)
            list.writeJSON(to: &bytes)
            body.writeBytes(bytes)
        } else if let record = value as? TaskRecord {
            record.writeJSON(to: &bytes)
            body.writeBytes(bytes)
        } else {
            do {
                body.writeBytes(try self.encoder.encode(value))
            } catch {
                body.writeString(#"{"error":"cannot encode the response"}"#)
            }
        }
        body.writeString("\n")
        self.send(status: status, body: body, contentType: "application/json", request, context)
    }

    private func send(
        status: HTTPResponseStatus, body: ByteBuffer, contentType: String, _ request: HTTPRequestHead,
        _ context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Date", value: HTTPDate.now())
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            self.wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
            promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        if request.isKeepAlive { context.triggerUserOutboundEvent(ControlPhase.responseEnding, promise: nil) }
        let done = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if !request.isKeepAlive {
            done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }
}

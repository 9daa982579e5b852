import AFProxyControl
import AFProxyModel
import AFProxyServerKit
import NIOCore
import NIOHTTP1

/// The web port's front door, between the HTTP codec and the control API: every request is
/// judged by `WebAccess` from its head; the API's (`/v1/…`, `/metrics`) go on to the control
/// handler, the page's files are answered here, and so are refusals. A request answered here has
/// its body read and dropped before the answer goes out, so keep-alive framing stays right.
final class WebGateHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private struct Answer {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    private enum Mode {
        case idle
        case forward
        case answer(HTTPRequestHead, Answer)
    }

    private let access: () -> WebAccess?
    /// The first `GET /v1/live` line as it would be now, for the page to carry.
    private let snapshot: () -> [UInt8]
    private var mode = Mode.idle

    init(access: @escaping () -> WebAccess?, snapshot: @escaping () -> [UInt8]) {
        self.access = access
        self.snapshot = snapshot
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        switch (part, self.mode) {
        case (.head(let head), _):
            if let answer = self.judge(head) {
                self.mode = .answer(head, answer)
            } else {
                self.mode = .forward
                context.fireChannelRead(data)
            }
        case (.body, .forward):
            context.fireChannelRead(data)
        case (.end, .forward):
            self.mode = .idle
            context.fireChannelRead(data)
        case (.end, .answer(let head, let answer)):
            self.mode = .idle
            self.send(answer, to: head, context)
        case (.body, _), (.end, .idle):
            break
        }
    }

    /// Nil: the control API answers.
    private func judge(_ head: HTTPRequestHead) -> Answer? {
        guard let access = self.access() else {
            return Self.text(.serviceUnavailable, "the dashboard is starting")
        }
        let request = WebAccess.Request(
            method: head.method.rawValue, target: head.uri, host: head.headers.first(name: "host"),
            origin: head.headers.first(name: "origin"), cookie: head.headers["cookie"],
            authorization: head.headers.first(name: "authorization"))
        switch access.decide(request) {
        case .refuse(let status, let message):
            return Self.text(HTTPResponseStatus(statusCode: status), message)
        case .enter(let cookie, let location):
            var answer = Self.text(.seeOther, "the dashboard is at \(location)")
            answer.headers.add(name: "Set-Cookie", value: cookie)
            answer.headers.add(name: "Location", value: location)
            return answer
        case .allow:
            break
        }
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        if path.hasPrefix("/v1/") || path == "/metrics" { return nil }
        let asset = WebAssets.asset(at: path)
        guard asset != nil || WebAssets.isPage(path) else { return Self.text(.notFound, "no such page: \(path)") }
        guard head.method == .GET || head.method == .HEAD else {
            return Self.text(.methodNotAllowed, "method \(head.method.rawValue) not allowed on \(path)")
        }
        var headers = HTTPHeaders()
        guard let asset else {
            let nonce = WebToken.random()
            headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
            headers.add(name: "Content-Security-Policy", value: WebPage.contentSecurityPolicy(nonce: nonce))
            let page = head.method == .HEAD ? [] : WebPage.render(nonce: nonce, snapshot: self.snapshot())
            return Answer(status: .ok, headers: headers, body: page)
        }
        headers.add(name: "Content-Type", value: asset.contentType)
        return Answer(status: .ok, headers: headers, body: head.method == .HEAD ? [] : asset.bytes)
    }

    private static func text(_ status: HTTPResponseStatus, _ message: String) -> Answer {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        return Answer(status: status, headers: headers, body: Array((message + "\n").utf8))
    }

    private func send(_ answer: Answer, to request: HTTPRequestHead, _ context: ChannelHandlerContext) {
        context.triggerUserOutboundEvent(ConnectionPhase.requestReceived, promise: nil)
        var headers = answer.headers
        headers.add(name: "Content-Length", value: String(answer.body.count))
        headers.add(name: "Date", value: HTTPDate.now())
        // A refused client gets no second try on the same connection.
        let keepAlive = request.isKeepAlive && answer.status.code < 400
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            self.wrapOutboundOut(
                .head(HTTPResponseHead(version: request.version, status: answer.status, headers: headers))),
            promise: nil)
        if request.method != .HEAD || !answer.body.isEmpty {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: answer.body)))), promise: nil)
        }
        if keepAlive { context.triggerUserOutboundEvent(ConnectionPhase.responseEnding, promise: nil) }
        let done = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if !keepAlive {
            done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }
}

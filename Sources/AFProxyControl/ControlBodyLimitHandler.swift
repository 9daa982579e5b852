import NIOCore
import NIOHTTP1

/// Refuses a request body over `maxBodyBytes` with 413 as soon as it is known: when the head
/// declares a larger `Content-Length`, or when the parts of a chunked body add up past it. Nothing
/// of that request goes further, and the connection closes once the answer is out, so the rest of
/// the body is never read. Requests within the limit pass unchanged. An edit of a held task
/// (`PATCH /v1/tasks/{id}/request`, `POST …/respond`, a replay's changes) carries a whole body
/// and has a limit of its own (`ControlLimits.maxEditBodyBytes`).
final class ControlBodyLimitHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let generalLimit: Int
    private let editLimit: Int
    /// The limit of the request under way.
    private var maxBodyBytes: Int
    private var version = HTTPVersion.http1_1
    private var received = 0
    private var refused = false

    init(maxBodyBytes: Int = ControlLimits.maxBodyBytes, maxEditBodyBytes: Int = ControlLimits.maxEditBodyBytes) {
        self.generalLimit = maxBodyBytes
        self.editLimit = maxEditBodyBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// A change to a held task's request or its answer.
    private static func isEdit(_ head: HTTPRequestHead) -> Bool {
        let path = head.uri.split(separator: "?", maxSplits: 1).first ?? ""
        return (head.method == .PATCH && (path.hasSuffix("/request") || path.hasSuffix("/response")))
            || (head.method == .POST && (path.hasSuffix("/respond") || path.hasSuffix("/replay")))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.refused else { return }
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.version = head.version
            self.received = 0
            self.maxBodyBytes = Self.isEdit(head) ? self.editLimit : self.generalLimit
            let declared = head.headers["Content-Length"].first.flatMap { Int($0) } ?? 0
            if declared > self.maxBodyBytes {
                return self.refuse(context, "the request declares a body of \(declared) bytes")
            }
        case .body(let part):
            self.received += part.readableBytes
            if self.received > self.maxBodyBytes {
                return self.refuse(context, "the request body is over \(self.maxBodyBytes) bytes")
            }
        case .end:
            break
        }
        context.fireChannelRead(data)
    }

    private func refuse(_ context: ChannelHandlerContext, _ reason: String) {
        self.refused = true
        let message = "\(reason); the control API takes bodies of at most \(self.maxBodyBytes) bytes"
        ControlRefusal(ControlRefusal.contentTooLarge, message).send(on: context, version: self.version)
    }
}

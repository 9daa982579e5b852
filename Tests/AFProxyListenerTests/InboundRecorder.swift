import NIOCore

/// The last handler of a test pipeline: keeps what reaches it (reads, user events, errors) so
/// that a test can say exactly what a handler before it let through, and in which order.
final class InboundRecorder<Part>: ChannelInboundHandler {
    typealias InboundIn = Part

    enum Seen {
        case read(Part)
        case event(Any)
        case error(Error)
    }

    private(set) var seen: [Seen] = []

    var reads: [Part] {
        self.seen.compactMap { if case .read(let part) = $0 { part } else { nil } }
    }

    var events: [Any] {
        self.seen.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    var errors: [Error] {
        self.seen.compactMap { if case .error(let error) = $0 { error } else { nil } }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.seen.append(.read(self.unwrapInboundIn(data)))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        self.seen.append(.event(event))
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        self.seen.append(.error(error))
    }
}

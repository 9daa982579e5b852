import AFProxyModel
import NIOCore

/// The client of a replayed task (`SessionManager.replay`): no connection, the daemon itself.
/// It hands the request body over at once (a recorded body, at most a record rule's 64 MiB),
/// takes the response as a client that reads fast would, and keeps none of it (a record rule
/// in force keeps it, as for any task). Its calls into the task come on an event loop, as a
/// connection's would.
final class ReplayClient: TaskClient {
    private let body: ByteBuffer?
    /// Where its calls come from; nil (the manager's tests, with no group): at once.
    let eventLoop: (any EventLoop)?

    init(body: ByteBuffer?, eventLoop: (any EventLoop)?) {
        self.body = body
        self.eventLoop = eventLoop
    }

    private func onLoop(_ work: @escaping @Sendable () -> Void) {
        if let eventLoop = self.eventLoop { eventLoop.execute(work) } else { work() }
    }

    /// Once the task is made: its whole request body, then its end.
    func start(_ task: HTTPTask) {
        guard task.kind == .upload else { return }
        let body = self.body
        self.onLoop {
            if let body { _ = task.appendRequestBody(body) }
            task.finishRequestBody()
        }
    }

    func task(_ task: HTTPTask, deliver delivery: ResponseDelivery) {
        guard let count = delivery.body?.readableBytes, count > 0 else { return }
        self.onLoop { task.clientDidWrite(bytes: count) }
    }

    func taskWantsRequestBody(_ task: HTTPTask) {}
    func taskAwaitsRequestBody(_ task: HTTPTask) {}
    func task(_ task: HTTPTask, didChangeSuspension suspended: Bool) {}
}

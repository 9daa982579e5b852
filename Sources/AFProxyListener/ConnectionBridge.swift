import AFProxyManager
import NIOCore

/// The task delegate's view of a client connection: it takes calls on the session thread and
/// replays them on the connection's event loop, where the handler lives.
final class ConnectionBridge: TaskClient {
    private let loop: any EventLoop
    private let handler: NIOLoopBound<ProxyConnectionHandler>
    /// The client's channel, asked what its socket still holds unsent.
    private let channel: any Channel

    init(handler: ProxyConnectionHandler, channel: any Channel) {
        self.loop = channel.eventLoop
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    var eventLoop: (any EventLoop)? { self.loop }

    func unsentBytes() -> Int? {
        ClientSendQueue.unsent(on: self.channel)
    }

    func task(_ task: HTTPTask, deliver delivery: ResponseDelivery) {
        self.loop.execute { self.handler.value.deliver(delivery, of: task) }
    }

    func taskWantsRequestBody(_ task: HTTPTask) {
        self.loop.execute { self.handler.value.resumeReading(for: task, reason: .backpressure) }
    }

    func taskAwaitsRequestBody(_ task: HTTPTask) {
        self.loop.execute { self.handler.value.sendContinue(for: task) }
    }

    func task(_ task: HTTPTask, didChangeSuspension suspended: Bool) {
        self.loop.execute {
            if suspended {
                self.handler.value.pauseReading(for: task, reason: .suspended)
            } else {
                self.handler.value.resumeReading(for: task, reason: .suspended)
            }
        }
    }
}

import AFProxyModel
import NIOCore

/// The client side of an HTTP task: the listener's connection. The task calls it from the
/// session thread or a verb's thread (see the contract in `ManagedTask`); an implementation hops
/// to its own event loop and never blocks.
package protocol TaskClient: AnyObject, Sendable {
    /// What was gathered since the last delivery, after each socket curl served: interim heads,
    /// the head (once), body bytes, and the end (once, last).
    func task(_ task: HTTPTask, deliver delivery: ResponseDelivery)
    /// The request body buffered for upstream fell below its low watermark: read the client again.
    func taskWantsRequestBody(_ task: HTTPTask)
    /// curl is ready to send the request body and has none of it yet, once per task: a client
    /// that sent `Expect: 100-continue` and is still waiting gets its `100 Continue` now (the
    /// origin's own 100 was forwarded, or the origin did not answer curl's `Expect` in time).
    func taskAwaitsRequestBody(_ task: HTTPTask)
    /// A person suspended (true) or resumed (false) the task: stop or restart reading the client.
    func task(_ task: HTTPTask, didChangeSuspension suspended: Bool)
    /// The loop its calls land on, which names the upstream session the task's transfers run on
    /// (`SessionAffinity`); nil: no loop, any session.
    var eventLoop: (any EventLoop)? { get }
    /// What the kernel still holds unsent for the client, asked on its loop when a drain could
    /// grow the task's receive window early (`ReceiveWindow.earlyMaximum`); nil: it cannot tell,
    /// and the window waits for `growAfter`.
    func unsentBytes() -> Int?
}

extension TaskClient {
    package var eventLoop: (any EventLoop)? { nil }
    package func unsentBytes() -> Int? { nil }
}

package struct ResponseDelivery: Sendable {
    /// Interim 1xx heads that came before the final one, in order.
    package var interim: [ProxyResponseHead] = []
    package var head: ProxyResponseHead?
    package var body: ByteBuffer?
    package var end: ResponseEnd?
    /// With a complete end: the trailer fields of a chunked body.
    package var trailers: HTTPHeaderList = []

    package init(
        interim: [ProxyResponseHead] = [], head: ProxyResponseHead? = nil, body: ByteBuffer? = nil,
        end: ResponseEnd? = nil, trailers: HTTPHeaderList = []
    ) {
        self.interim = interim
        self.head = head
        self.body = body
        self.end = end
        self.trailers = trailers
    }
}

package enum ResponseEnd: Sendable, Equatable {
    case complete
    case failed(TaskFailure)
}

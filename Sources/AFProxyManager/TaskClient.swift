import AFProxyCurl
import AFProxyModel
import NIOCore

/// The client side of a task: the listener's connection. The task delegate calls it from the
/// session thread; an implementation hops to its own event loop and never blocks.
public protocol TaskClient: AnyObject, Sendable {
    /// At most once per session loop iteration: the head (once), body bytes gathered since the
    /// last delivery, and the end (once, last).
    func task(_ task: TaskDelegate, deliver delivery: ResponseDelivery)
    /// The request body buffered for upstream fell below its low watermark: read the client again.
    func taskWantsRequestBody(_ task: TaskDelegate)
    /// A person suspended (true) or resumed (false) the task: stop or restart reading the client.
    func task(_ task: TaskDelegate, didChangeSuspension suspended: Bool)
}

public struct ResponseDelivery: Sendable {
    /// Interim 1xx heads that came before the final one, in order.
    public var interim: [ProxyResponseHead] = []
    public var head: ProxyResponseHead?
    public var body: ByteBuffer?
    public var end: ResponseEnd?
    /// With a complete end: the trailer fields of a chunked body.
    public var trailers: HTTPHeaderList = []
}

public enum ResponseEnd: Sendable, Equatable {
    case complete
    case failed(UpstreamFailure)
}

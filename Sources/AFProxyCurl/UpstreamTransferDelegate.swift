import AFProxyModel

/// The contract between the upstream session and the one delegate each transfer has (the
/// manager's task delegate), in the manner of `AFURLSessionManagerTaskDelegate` and
/// async-http-client's `HTTPClientResponseDelegate`.
///
/// Every method is called on the session thread, so an implementation needs no lock for what only
/// these methods touch, and must never block: a blocked delegate stalls every transfer. Order:
///
/// 1. `transfer(_:didReceiveInterim:)` for each interim 1xx head (102, 103), then
///    `transfer(_:didReceive:metrics:)` once, when the final response head is complete and its
///    framing checked. Not called when the transfer fails before a head arrived (an invalid head
///    fails it).
/// 2. `transfer(_:didReceiveBodyBytes:)` zero or more times, and `transfer(_:fillRequestBody:)` as curl
///    wants request bytes; either may answer "no more now" (`.takenWindowFull`, `.refused`,
///    `.pause`). That pauses that
///    direction until the delegate calls `UpstreamSession.continueReceiving(_:)` or
///    `continueSending(_:)` (or `resume(_:)`); refused response bytes are offered again then, so
///    nothing is lost.
/// 3. `transferDidFlush(_:)` right after curl served the socket on which 1 or 2 happened: the
///    moment to hand what was gathered to the client in one hop rather than one per callback.
/// 4. `transfer(_:didCompleteWith:metrics:)` exactly once, last; nothing follows it. On success,
///    `UpstreamTransfer.trailers` holds a chunked body's trailer fields.
public protocol UpstreamTransferDelegate: AnyObject, Sendable {
    /// An interim 1xx head, passed on before the final one.
    func transfer(_ transfer: UpstreamTransfer, didReceiveInterim head: ProxyResponseHead)
    /// `metrics` holds the phases up to the first byte (DNS, connect, TLS, TTFB) for live views.
    func transfer(_ transfer: UpstreamTransfer, didReceive head: ProxyResponseHead, metrics: TaskMetrics)
    func transfer(_ transfer: UpstreamTransfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyReceipt
    func transfer(_ transfer: UpstreamTransfer, fillRequestBody buffer: UnsafeMutableRawBufferPointer) -> RequestBodyRead
    /// curl sends the request again on a fresh connection (the reused one died under it) and
    /// needs the body from its start: true when the delegate will hand it over again.
    func transferRewindRequestBody(_ transfer: UpstreamTransfer) -> Bool
    func transferDidFlush(_ transfer: UpstreamTransfer)
    func transfer(_ transfer: UpstreamTransfer, didCompleteWith result: UpstreamResult, metrics: TaskMetrics)
}

/// The answer to response bytes.
public enum BodyReceipt: Sendable, Equatable {
    case taken
    /// Taken, and no more now: receiving pauses until `continueReceiving`.
    case takenWindowFull
    /// Not taken (the task is suspended): curl keeps them and offers them again on resume.
    case refused
}

/// The answer to curl's request for upload bytes.
public enum RequestBodyRead: Sendable, Equatable {
    case bytes(Int)
    /// Nothing buffered yet: pause sending until more arrives from the client.
    case pause
    /// The request body is complete.
    case end
}

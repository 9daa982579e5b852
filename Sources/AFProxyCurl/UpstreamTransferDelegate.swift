import AFProxyModel

/// What a transfer reports to the one delegate it has (the manager's `HTTPTask`), in the manner
/// of `AFURLSessionManagerTaskDelegate` and async-http-client's `HTTPClientResponseDelegate`.
/// Every method is called on the session thread. The order of the calls, the pauses their
/// answers cause and who may call what from which thread are the task contract, written once,
/// at the top of `ManagedTask` (AFProxyManager).
package protocol UpstreamTransferDelegate: AnyObject, Sendable {
    /// An interim 1xx head, passed on before the final one.
    func transfer(_ transfer: UpstreamTransfer, didReceiveInterim head: ProxyResponseHead)
    /// `metrics` holds the phases up to the first byte (DNS, connect, TLS, TTFB) for live views.
    func transfer(_ transfer: UpstreamTransfer, didReceive head: ProxyResponseHead, metrics: TaskMetrics)
    /// The body as the client is to get it: chunked framing removed (`ChunkedBodyDecoder`), any
    /// other coding as the origin applied it. At most one call per curl write callback.
    func transfer(_ transfer: UpstreamTransfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyReceipt
    /// A chunked body ended (its last chunk and trailer section came), after its last bytes and
    /// before completion, once: the end of a body of known length the delegate counts itself.
    func transferDidReceiveWholeBody(_ transfer: UpstreamTransfer)
    func transfer(
        _ transfer: UpstreamTransfer, fillRequestBody buffer: UnsafeMutableRawBufferPointer
    ) -> RequestBodyRead
    /// curl sends the request again on a fresh connection (the reused one died under it) and
    /// needs the body from its start: true when the delegate will hand it over again.
    func transferRewindRequestBody(_ transfer: UpstreamTransfer) -> Bool
    func transferDidFlush(_ transfer: UpstreamTransfer)
    func transfer(_ transfer: UpstreamTransfer, didCompleteWith result: UpstreamResult, metrics: TaskMetrics)
}

/// The answer to response bytes.
package enum BodyReceipt: Sendable, Equatable {
    case taken
    /// Taken, and no more now: receiving pauses until `continueReceiving`.
    case takenWindowFull
    /// Not taken (the task is suspended): curl keeps them and offers them again on resume.
    case refused
}

/// The answer to curl's request for upload bytes.
package enum RequestBodyRead: Sendable, Equatable {
    case bytes(Int)
    /// Nothing buffered yet: pause sending until more arrives from the client.
    case pause
    /// The request body is complete.
    case end
}

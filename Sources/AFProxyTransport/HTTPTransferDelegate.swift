import AFProxyModel

/// What a transfer reports to the one delegate it has (the manager's `HTTPTask` or
/// `DownloadTask`), in the manner of `AFURLSessionManagerTaskDelegate` and async-http-client's
/// `HTTPClientResponseDelegate`. Every method is called on the transport's thread (the daemon's:
/// the curl session's). The order of the calls, the pauses their answers cause and who may call
/// what from which thread are the task contract, written once, at the top of `ManagedTask`
/// (AFProxyManager). Declared here, beside `HTTPTransfer`, so that the tasks own what they hear
/// and the engines implement it, not the other way round.
package protocol HTTPTransferDelegate: AnyObject, Sendable {
    /// An interim 1xx head, passed on before the final one.
    func transfer(_ transfer: any HTTPTransfer, didReceiveInterim head: ProxyResponseHead)
    /// `metrics` holds the phases up to the first byte (DNS, connect, TLS, TTFB) for live views.
    func transfer(_ transfer: any HTTPTransfer, didReceive head: ProxyResponseHead, metrics: TaskMetrics)
    /// The body as the client is to get it: chunked framing removed, any other coding as the
    /// origin applied it. At most one call per read the engine makes (curl: per write callback).
    func transfer(_ transfer: any HTTPTransfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyReceipt
    /// A chunked body ended (its last chunk and trailer section came), after its last bytes and
    /// before completion, once: the end of a body of known length the delegate counts itself.
    func transferDidReceiveWholeBody(_ transfer: any HTTPTransfer)
    func transfer(
        _ transfer: any HTTPTransfer, fillRequestBody buffer: UnsafeMutableRawBufferPointer
    ) -> RequestBodyRead
    /// The engine sends the request again on a fresh connection (the reused one died under it)
    /// and needs the body from its start: true when the delegate will hand it over again.
    func transferRewindRequestBody(_ transfer: any HTTPTransfer) -> Bool
    /// The end of one turn of the transport's thread in which something reached the delegate:
    /// what it gathered goes on in one hop.
    func transferDidFlush(_ transfer: any HTTPTransfer)
    func transfer(_ transfer: any HTTPTransfer, didCompleteWith result: UpstreamResult, metrics: TaskMetrics)
}

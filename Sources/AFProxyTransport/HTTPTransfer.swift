import AFProxyModel

/// One upstream HTTP exchange as its task holds it: made by a transport for a `TransferRequest`
/// with the task as its `HTTPTransferDelegate`, then sent commands. Each command takes effect
/// later, on the transport's own thread, and the delegate hears what happened there (the order
/// is the task contract at the top of `ManagedTask`, in AFProxyManager). Only `start` begins
/// I/O; a command for a transfer that completed is ignored.
///
/// A class-bound protocol so that a task tells its current transfer from a stale one by
/// identity (`===`), and so that a call costs an existential dispatch and nothing more. The
/// daemon's is curl's `UpstreamTransfer`; the tests' records its commands.
package protocol HTTPTransfer: AnyObject, Sendable {
    /// What the task asked for; the same for the transfer's whole life.
    var request: TransferRequest { get }
    /// The trailer fields of a chunked response; complete once the transfer completed. Read on
    /// the transport's thread only (in the delegate's completion), where they are written.
    var trailers: HTTPHeaderList { get }

    func start()
    func suspend()
    func resume()
    /// The task's window has room again: response bytes may flow.
    func continueReceiving()
    /// The task has request bytes again.
    func continueSending()
    /// Ends the transfer; its delegate hears the completion with `reason` (unless it completed first).
    func cancel(reason: TaskFailure)
}

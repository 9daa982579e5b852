/// Outbound user events by which the handler that answers requests tells
/// `ConnectionTimeoutHandler`, at the head of the pipeline on raw bytes, where the connection is
/// in its request/response cycle, so that it knows which timer applies.
package enum ConnectionPhase: Sendable {
    /// A request arrived (the proxy: its head, or its whole body when a body followed; the control
    /// socket: head and body): no timer runs until its answer ends, however long that takes (a
    /// suspended transfer, an event stream).
    case requestReceived
    /// The request head arrived and its body is still to come, read as it arrives: the body timer
    /// runs, restarted by every byte, until `requestReceived` says the body ended or the reads are
    /// held (a full upload buffer, a suspended task: the silence is then not the client's).
    case bodyAwaited
    /// The answer ends and the connection stays open for the next request: the idle timer runs
    /// again. The control socket sends it just before the answer's last part, since writing that
    /// part may deliver a pipelined request at once; the proxy once the answer is written.
    case responseEnding
}

import AFProxyCurl
import AFProxyModel
import AFProxyRules
import AFProxyTunnel
import NIOCore

/// The upstream work the manager depends on, and nothing more: HTTP transfers, CONNECT tunnels
/// and a TLS pin probe. The daemon's is the curl session with the tunnel relay beside it
/// (`UpstreamSession+Transport`); tests drive the tasks through an in-memory one, as
/// async-http-client's requests are driven by a mock executor.
///
/// HTTP transfers: a task makes its `UpstreamTransfer` (with itself as delegate) and sends it
/// commands; each takes effect later, on the transport's own thread, and the delegate hears what
/// happened there (the order is the task contract in `ManagedTask`). Only `start` begins I/O; a
/// command for a transfer that completed is ignored.
package protocol UpstreamTransport: Sendable {
    func start(_ transfer: UpstreamTransfer)
    func suspend(_ transfer: UpstreamTransfer)
    func resume(_ transfer: UpstreamTransfer)
    /// The task's window has room again: response bytes may flow.
    func continueReceiving(_ transfer: UpstreamTransfer)
    /// The task has request bytes again.
    func continueSending(_ transfer: UpstreamTransfer)
    /// Ends the transfer; its delegate hears the completion with `reason` (unless it completed first).
    func cancel(_ transfer: UpstreamTransfer, reason: TaskFailure)

    /// A tunnel to `host:port` whose relay will run on `eventLoop` (the client connection's);
    /// made on that loop, connecting nothing until `start()`. `upgrade`: it carries a protocol
    /// upgrade (a WebSocket handshake) rather than a CONNECT.
    func openTunnel(
        host: String, port: Int, eventLoop: any EventLoop, destinations: DestinationPolicy,
        delegate: any TunnelTransferDelegate, throttle: ThrottleTicket?, upgrade: TunnelUpgrade?
    ) -> any TunnelTransport

    /// The `sha256//…` pin of the key `host:port` presents now, verified against `caFile` (and
    /// the system's CAs). Blocks for the handshake: never call it on an event loop or the
    /// session thread.
    func probePin(host: String, port: Int, caFile: String?) -> Result<String, TaskFailure>
}

/// One CONNECT tunnel as a stream task drives it. Made, started and attached on its event loop;
/// `pause`, `resume`, `cancel` and the byte counts from any thread. Its delegate hears connected,
/// first byte and completion (once, last) on the loop.
package protocol TunnelTransport: Sendable {
    /// Succeeds once the upstream connection is open; fails with a `TaskFailure` whose
    /// `httpStatus` is the client's answer.
    var established: EventLoopFuture<Void> { get }
    var bytesUp: Int64 { get }
    var bytesDown: Int64 { get }
    func start()
    func pause()
    func resume()
    func cancel(_ failure: TaskFailure)
    /// The client's side joins the relay once its 200 is written; false if the tunnel is over.
    func attachClient(_ channel: any Channel) -> Bool
}

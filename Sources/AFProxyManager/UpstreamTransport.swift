import AFProxyModel
import AFProxyRules
import AFProxyTransport
import AFProxyTunnel
import NIOCore

/// The upstream work the manager depends on, and nothing more: HTTP transfers, CONNECT tunnels,
/// the client side of intercepted connections and a TLS pin probe. The daemon's is the curl
/// session with the tunnel relay beside it (`UpstreamSession+Transport`, in AFProxyDaemon, the
/// one module that sees both); tests drive the tasks through an in-memory one, as
/// async-http-client's requests are driven by a mock executor. The manager owns what it asks
/// (`TransferRequest`) and what it hears (`HTTPTransferDelegate`, `TunnelTransferDelegate`); a
/// transport turns those into handles it runs.
package protocol UpstreamTransport: Sendable {
    /// The handle of one HTTP exchange for `request`, reporting to `delegate`; nothing moves
    /// until its `start()` (`HTTPTransfer` says how its commands behave).
    func makeTransfer(_ request: TransferRequest, delegate: any HTTPTransferDelegate) -> any HTTPTransfer

    /// A tunnel to `host:port` whose relay will run on `eventLoop` (the client connection's);
    /// made on that loop, connecting nothing until `start()`. `upgrade`: it carries a protocol
    /// upgrade (a WebSocket handshake) rather than a CONNECT.
    func openTunnel(
        host: String, port: Int, eventLoop: any EventLoop, destinations: DestinationPolicy,
        delegate: any TunnelTransferDelegate, throttle: ThrottleTicket?, upgrade: TunnelUpgrade?
    ) -> any TunnelTransport

    /// The stream task's side of an intercepted CONNECT, on `eventLoop` (the client
    /// connection's): nothing upstream, since each request inside is a task of its own; what is
    /// left is the client's connection (its byte counts, its reads held while suspended).
    func openInterceptedConnection(
        eventLoop: any EventLoop, delegate: any TunnelTransferDelegate
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

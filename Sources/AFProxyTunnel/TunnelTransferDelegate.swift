import AFProxyModel

/// What a tunnel reports to the one delegate it has (the manager's stream task), as an
/// `HTTPTransfer` reports to its `HTTPTransferDelegate`. The order and threads are
/// part of the task contract, written once in `ManagedTask`.
package protocol TunnelTransferDelegate: AnyObject, Sendable {
    /// The upstream connection is open; the client is answered 200 next.
    func tunnelDidConnect(_ connection: TunnelConnection)
    /// The origin sent its first byte (the task's time to first byte).
    func tunnelDidReceiveFirstByte()
    /// An upgrade's origin answered with `status` (nil: not with an HTTP status line).
    func tunnelDidReceiveAnswer(status: Int?)
    /// The kernel relay took the tunnel's bytes over (`TunnelRelayKind.splice`).
    func tunnelDidSplice()
    /// The tunnel is over: once, last.
    func tunnelDidComplete(_ end: TunnelEnd)
}

/// What the task records of an opened tunnel.
package struct TunnelConnection: Sendable, Equatable {
    /// Nil for an address literal: no lookup happened.
    package var dnsMs: Double?
    package var connectMs: Double
    package var remoteAddress: String
}

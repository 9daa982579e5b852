/// What a `SpliceRelay` tells the tunnel it moves bytes for: `TunnelRelay` in the daemon, a
/// recorder in the relay's tests (which drive it over real sockets without a tunnel around it).
/// Called on the tunnel's event loop.
protocol SpliceRelayOwner: AnyObject {
    /// The direction from `side` emptied its pipe after its input ended: NIO carries on.
    func spliceHandedBack(_ side: TunnelLifecycle.Side)
    /// `count` bytes entered a pipe; `throttled`: a throttle rule sized the splice.
    func spliceFilled(_ count: Int, throttled: Bool)
    /// The first bytes from upstream entered the pipe.
    func upstreamSentFirstByte()
    /// A splice call on `side`'s socket failed (the relay has stopped).
    func failed(_ side: TunnelLifecycle.Side, _ error: any Error)
}

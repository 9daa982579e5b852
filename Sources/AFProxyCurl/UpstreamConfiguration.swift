/// The knobs of the upstream session.
public struct UpstreamConfiguration: Sendable, Equatable {
    /// Time to establish the TCP connection to the origin (curl's CONNECTTIMEOUT): 504 past it.
    public var connectTimeout: Duration
    /// Time without a byte from or to the origin while the transfer is running and waiting on it:
    /// 504 before the response head, a truncated response after. Never applies to a suspended
    /// transfer or one waiting on a slow client.
    public var idleTimeout: Duration
    /// curl's upload buffer: larger means fewer read callbacks per MiB sent.
    public var uploadBufferSize: Int
    /// Easy handles kept for reuse.
    public var pooledHandles: Int

    public init(
        connectTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(120),
        uploadBufferSize: Int = 256 * 1024, pooledHandles: Int = 64
    ) {
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.uploadBufferSize = uploadBufferSize
        self.pooledHandles = pooledHandles
    }
}

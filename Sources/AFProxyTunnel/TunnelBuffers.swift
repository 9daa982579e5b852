import NIOCore

/// How much a tunnel reads at once and keeps queued, for both of its channels. The relay's CPU
/// goes almost all to the kernel (TCP, and the copy into and out of each socket), with NIO's
/// defaults as with these; so these are chosen for few syscalls and for a bound on the memory
/// of one tunnel (what a direction holds at full speed, and little when idle), not for speed.
enum TunnelBuffers {
    /// Reads start small (an idle tunnel holds no big buffer) and grow while they fill.
    static let recvAllocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 256 << 10)
    /// Reads per readiness event. NIO does not look at the partner's writability inside one
    /// batch, so this times the largest read is what may pile up beyond `waterMark.high`.
    static let readsPerBatch = 4
    /// A side reads only while its partner has less than `high` bytes queued, and again once
    /// that fell below `low`: what waits for a slow side stays under `high` plus one batch.
    static let waterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 256 << 10, high: 1 << 20)

    static func apply(to options: some NIOSynchronousChannelOptions) throws {
        try options.setOption(.recvAllocator, value: Self.recvAllocator)
        try options.setOption(.maxMessagesPerRead, value: UInt(Self.readsPerBatch))
        try options.setOption(.writeBufferWaterMark, value: Self.waterMark)
    }
}

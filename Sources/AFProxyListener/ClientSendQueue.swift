import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// What the kernel still holds unsent for a client's socket: `tcpi_notsent_bytes` of Linux's
/// TCP_INFO (4.6 and later). The receive window asks it before it grows for a client that has
/// taken little so far (`ReceiveWindow`): a prompt drain with nothing left unsent shows the
/// client's side takes the bytes, where a slow reader's kernel queue backs up within its first
/// few kilobytes.
enum ClientSendQueue {
    /// Linux's `struct tcp_info` as far as `tcpi_notsent_bytes` (at byte 144): glibc's own
    /// declaration stops before it, and the kernel copies only as much as it is asked for.
    struct TCPInfoPrefix: Sendable {
        var skipped:
            (
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
            )
        var notsentBytes: UInt32
        var minRTT: UInt32
    }

    /// A box for the value of a future already complete on its loop (NIO runs its callbacks inline).
    private final class Reading: @unchecked Sendable {
        var unsent: Int?
    }

    /// The unsent bytes on `channel`'s socket, read now: an HTTP/2 stream's are its connection's
    /// (the parent channel, the TCP socket all its streams share). Nil off its loop.
    static func unsent(on channel: any Channel) -> Int? {
        guard channel.eventLoop.inEventLoop,
            let provider = channel as? any SocketOptionProvider ?? channel.parent as? any SocketOptionProvider
        else { return nil }
        let reading = Reading()
        let future: EventLoopFuture<TCPInfoPrefix> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(IPPROTO_TCP), name: SocketOptionName(TCP_INFO))
        future.whenSuccess { reading.unsent = Int($0.notsentBytes) }
        return reading.unsent
    }
}

import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Acknowledges at once what the client sent last, on an accepted TCP connection.
///
/// After a TLS 1.3 handshake afproxy writes nothing until the client's request has come (its
/// session tickets wait for its first write: BoringSSL holds them back and swift-nio-ssl cannot
/// write an empty record to push them out), so the kernel delays its ACK of the client's
/// Finished. A client with Nagle's algorithm on (Python's requests, pip) holds its request back
/// until that ACK: a delayed-ACK timer on every new intercepted connection. TCP_QUICKACK sends
/// the pending ACK now.
enum QuickAck {
    static func now(on channel: any Channel) {
        #if os(Linux)
        let option = ChannelOptions.Types.SocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: CInt(IPPROTO_TCP)),
            name: NIOBSDSocket.Option(rawValue: CInt(TCP_QUICKACK)))
        // Best effort: a channel that is not a TCP socket (tests, a closed one) has nothing to ACK.
        try? channel.syncOptions?.setOption(option, value: 1)
        #endif
    }
}

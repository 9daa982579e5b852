import AFProxyModel
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Where a redirected connection was going before netfilter sent it to afproxy:
/// `SO_ORIGINAL_DST` (IPv4) and `IP6T_SO_ORIGINAL_DST` (IPv6), both option 80, read from the
/// conntrack entry of the connection's own namespace (linux/netfilter_ipv4.h,
/// netfilter_ipv6/ip6_tables.h; Glibc's module exports neither).
enum OriginalDestination {
    static let option: Int32 = 80

    static func of(_ channel: any Channel) -> EventLoopFuture<(address: IPAddress, port: Int)> {
        guard let provider = channel as? any SocketOptionProvider, let local = channel.localAddress else {
            return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        if case .v6 = local {
            return Self.read(provider, level: Int32(IPPROTO_IPV6)) { (address: sockaddr_in6) in
                (withUnsafeBytes(of: address.sin6_addr) { Array($0) }, address.sin6_port)
            }
        }
        return Self.read(provider, level: Int32(IPPROTO_IP)) { (address: sockaddr_in) in
            (withUnsafeBytes(of: address.sin_addr) { Array($0) }, address.sin_port)
        }
    }

    /// The option at `level`, read as `Address` and taken apart by `parts` (address bytes, port
    /// in network order).
    private static func read<Address: Sendable>(
        _ provider: any SocketOptionProvider, level: Int32, _ parts: @escaping @Sendable (Address) -> ([UInt8], UInt16)
    ) -> EventLoopFuture<(address: IPAddress, port: Int)> {
        let future: EventLoopFuture<Address> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(level), name: SocketOptionName(Self.option))
        return future.flatMapThrowing { value in
            let (bytes, port) = parts(value)
            guard let ip = IPAddress(bytes: bytes) else { throw ChannelError.operationUnsupported }
            return (ip, Int(UInt16(bigEndian: port)))
        }
    }
}

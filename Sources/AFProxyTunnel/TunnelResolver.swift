import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Name resolution for tunnels: getaddrinfo on NIO's blocking-I/O thread pool, timed, so that the
/// task records its DNS time as curl does for HTTP tasks (NIO's own resolver inside
/// `ClientBootstrap.connect(host:port:)` reports no timing). An address literal is not resolved
/// at all, and its DNS time stays null: no lookup happened.
enum TunnelResolver {
    struct Failure: Error {
        var message: String
    }

    /// Every address of `host`, in getaddrinfo's order (RFC 6724 preference), or a literal's one.
    static func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        if let literal = try? SocketAddress(ipAddress: host, port: port) {
            return eventLoop.makeSucceededFuture([literal])
        }
        return NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            try Self.lookUp(host: host, port: port)
        }
    }

    private static func lookUp(host: String, port: Int) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw Failure(message: String(cString: gai_strerror(rc)))
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next?.pointee {
            next = info.ai_next
            guard let address = info.ai_addr else { continue }
            switch info.ai_family {
            case AF_INET:
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    addresses.append(SocketAddress($0.pointee, host: host))
                }
            case AF_INET6:
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    addresses.append(SocketAddress($0.pointee, host: host))
                }
            default:
                continue
            }
        }
        guard !addresses.isEmpty else { throw Failure(message: "no IPv4 or IPv6 address") }
        return addresses
    }
}

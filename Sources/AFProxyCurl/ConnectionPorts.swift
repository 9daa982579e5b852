#if canImport(Glibc)
import Glibc
#endif

/// The local and remote TCP ports of an upstream connection: how curl's prerequest callback
/// names the connection a transfer took, matched against the sockets of idle connections.
struct ConnectionPorts: Hashable {
    var local: Int32
    var remote: Int32

    init(local: Int32, remote: Int32) {
        self.local = local
        self.remote = remote
    }

    /// The ports of a connected socket; nil when it has none (closed, or not TCP over IP).
    init?(of socket: Int32) {
        guard let local = Self.port(socket, getsockname), let remote = Self.port(socket, getpeername) else { return nil }
        self.init(local: local, remote: remote)
    }

    private static func port(
        _ socket: Int32, _ name: (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?) -> Int32
    ) -> Int32? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(socket, $0, &length) }
        }
        guard result == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer -> Int32? in
            switch family {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int32(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int32(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default:
                return nil
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket's address (`sockaddr_un`) and its path, written once for the places that handle
/// the control socket by hand rather than through NIO: afproxyctl connecting, the daemon checking
/// whether a socket file is live before it takes the path, and the daemon naming an adopted
/// socket in its log.
package enum UnixSocketAddress {
    /// The longest path an address holds (without its NUL).
    package static var maxPathLength: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    /// `connect(2)` of `fd` to the socket at `path`: 0, or the errno (`ENAMETOOLONG` when the path
    /// does not fit an address).
    package static func connect(_ fd: Int32, to path: String) -> Int32 {
        guard path.utf8.count <= Self.maxPathLength else { return ENAMETOOLONG }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? 0 : errno
    }

    /// The path the Unix socket `fd` is bound to; nil for another family or an unnamed socket.
    package static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.isEmpty ? nil : path
    }
}

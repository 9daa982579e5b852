import AFProxyModel

#if canImport(Glibc)
import AFProxyRules
import Glibc
#endif

/// Reads `proxy-auth-file`: its users, and a warning when others than its owner and group may
/// read it (the hashes are slow to crack, not impossible).
package enum ProxyAuthFile {
    package struct Loaded: Sendable {
        package var users: ProxyUsers
        package var warning: String?
    }

    package static func load(path: String) throws(ProxyAuthFileError) -> Loaded {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ProxyAuthFileError("proxy-auth-file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw ProxyAuthFileError("proxy-auth-file \(path): not a regular file")
        }
        guard status.st_size <= 1 << 20 else { throw ProxyAuthFileError("proxy-auth-file \(path): larger than 1 MiB") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw ProxyAuthFileError("proxy-auth-file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += buffer[..<count]
            guard bytes.count <= 1 << 20 else { throw ProxyAuthFileError("proxy-auth-file \(path): larger than 1 MiB") }
        }
        let users: ProxyUsers
        do {
            users = try ProxyUsers(parsing: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw ProxyAuthFileError("proxy-auth-file \(path), \(error)")
        }
        guard !users.hashes.isEmpty else { throw ProxyAuthFileError("proxy-auth-file \(path): names no user") }
        let warning =
            status.st_mode & 0o007 != 0
            ? "proxy-auth-file \(path) is readable by every user: chmod o-rwx it (its hashes can be attacked offline)"
            : nil
        return Loaded(users: users, warning: warning)
    }
}

package struct ProxyAuthFileError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { self.message }
}

import AFProxyModel
import FoundationEssentials

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
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ProxyAuthFileError("proxy-auth-file \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ProxyAuthFileError("proxy-auth-file \(path): not a regular file")
        }
        guard status.st_size <= 1 << 20 else { throw ProxyAuthFileError("proxy-auth-file \(path): larger than 1 MiB") }
        let bytes: Data
        do throws(FileError) {
            bytes = try Files.contents(of: path) ?? Data()
        } catch {
            throw ProxyAuthFileError("proxy-auth-file \(path): \(String(cString: strerror(error.code)))")
        }
        guard bytes.count <= 1 << 20 else { throw ProxyAuthFileError("proxy-auth-file \(path): larger than 1 MiB") }
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

import AFProxyModel
import AFProxyStore

#if canImport(Glibc)
import Glibc
#endif

/// The token's file in the runtime directory, readable by the daemon's user only. Any file
/// already at the path is removed first and the new one created with O_EXCL and O_NOFOLLOW, so a
/// link planted there cannot redirect the write.
enum WebTokenFile {
    static func write(_ token: String, to path: String) throws(WebServer.Failure) {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !directory.isEmpty {
            do throws(FileError) {
                try Files.makeDirectory(directory)
            } catch {
                throw WebServer.Failure(description: "web-listen: \(error)")
            }
        }
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("cannot create \(path)") }
        defer { close(fd) }
        let line = Array((token + "\n").utf8)
        let written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard fchmod(fd, 0o600) == 0, written == line.count else { throw Self.failure("cannot write \(path)") }
    }

    private static func failure(_ what: String) -> WebServer.Failure {
        WebServer.Failure(description: "web-listen: \(what): \(String(cString: strerror(errno)))")
    }
}

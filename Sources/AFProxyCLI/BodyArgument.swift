import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// A body given on the command line as curl takes one: `@FILE` reads the file (`@-` standard
/// input), anything else is the body's text. Read with POSIX calls, so that a file that cannot be
/// read is named with the system's reason ("No such file or directory").
enum BodyArgument {
    /// What an edit carries at most (the daemon takes 12 MiB of base64).
    static let limit = 8 << 20

    static func bytes(_ argument: String) throws -> [UInt8] {
        guard argument.hasPrefix("@") else { return Array(argument.utf8) }
        let path = String(argument.dropFirst())
        let fd = path == "-" ? dup(0) : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw Self.failure("cannot read the body from \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                throw Self.failure("cannot read the body from \(path): \(String(cString: strerror(errno)))")
            }
            guard count > 0 else { return bytes }
            bytes += chunk[..<count]
            guard bytes.count <= Self.limit else {
                throw Self.failure("the body in \(path) is over \(Self.limit) bytes, more than an edit carries")
            }
        }
    }

    private static func failure(_ message: String) -> ExitCode {
        Console.error("afproxyctl: \(message)")
        return ExitCode(1)
    }
}

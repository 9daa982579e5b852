import AFProxyModel
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Reads the files map-local rules answer with, on a lane of the I/O executor: the session
/// thread and the event loops never wait on a disk. Whole files up to `limit`, since an answer
/// from the proxy is one delivery; a larger file is refused with the reason.
package final class LocalFileReader: Sendable {
    private let lane = IOExecutor.shared.lane()
    /// What one answer holds at most.
    package static let limit = 64 << 20

    package init() {}

    /// Why a file could not be an answer, for a person.
    package enum Failure: Error, Sendable, Equatable {
        case notFound(String)
        case tooLarge(String)
        case unreadable(String)
    }

    /// `completion` runs on the lane with the bytes of `path`, or why not.
    package func load(_ path: String, completion: @escaping @Sendable (Result<[UInt8], Failure>) -> Void) {
        self.lane.submit { completion(Self.contents(path)) }
    }

    private static func contents(_ path: String) -> Result<[UInt8], Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            return errno == ENOENT || errno == ENOTDIR
                ? .failure(.notFound("\(path): \(reason)")) : .failure(.unreadable("\(path): \(reason)"))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            return .failure(.unreadable("\(path): \(String(cString: strerror(errno)))"))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.notFound("\(path): not a regular file")) }
        guard info.st_size <= Self.limit else {
            return .failure(
                .tooLarge("\(path) is \(info.st_size) bytes, over the \(Self.limit) a map-local answer holds"))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return .failure(.unreadable("\(path): \(String(cString: strerror(errno)))")) }
            if count == 0 { break }  // shrank since fstat: what is there
            filled += count
        }
        bytes.removeSubrange(filled...)
        return .success(bytes)
    }
}

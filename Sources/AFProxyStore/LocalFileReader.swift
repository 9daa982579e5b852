import AFProxyModel
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Reads the files map-local rules answer with, on a lane of the I/O executor: the session
/// thread and the event loops never wait on a disk. Whole files up to `limit`, since an answer
/// from the proxy is one delivery; a larger file is refused with the reason. A file is served
/// only when the rule's author could read it (`ReadRights`): the daemon opens it, then checks the
/// file and every directory above where it really is (symbolic links followed) as that author.
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
        /// The rule's author could not read it.
        case forbidden(String)
    }

    /// `completion` runs on the lane with the bytes of `path`, or why not.
    package func load(
        _ path: String, as rights: ReadRights, completion: @escaping @Sendable (Result<[UInt8], Failure>) -> Void
    ) {
        self.lane.submit { completion(Self.contents(path, as: rights)) }
    }

    private static func contents(_ path: String, as rights: ReadRights) -> Result<[UInt8], Failure> {
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
        if rights != .daemon, let refusal = Self.refusal(fd, info, path, rights) {
            return .failure(.forbidden(refusal))
        }
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

    /// Why `rights` may not read the open file `fd` (`info` its fstat), nil when they may. The
    /// directories are those of the path the kernel opened (`/proc/self/fd`), so a link to a
    /// private file is judged where the file is; a file whose place cannot be told is refused.
    /// The reasons name the rule's path only: whoever uses the proxy reads them.
    private static func refusal(_ fd: Int32, _ info: stat, _ path: String, _ rights: ReadRights) -> String? {
        let who = rights.description
        guard let real = Self.openedPath(fd) else {
            return "\(path): where it lies cannot be told, not served for \(who)"
        }
        if ReadRights.kernelViews.contains(where: { real == $0 || real.hasPrefix($0 + "/") }) {
            return "\(path): the kernel's view of the daemon, never served for \(who)"
        }
        var directories = ["/"]
        var prefix = ""
        for component in real.split(separator: "/").dropLast() {
            prefix += "/" + component
            directories.append(prefix)
        }
        for directory in directories {
            var above = stat()
            guard stat(directory, &above) == 0,
                rights.allow(.search, mode: above.st_mode, owner: above.st_uid, group: above.st_gid)
            else { return "\(path): \(who) may not reach it" }
        }
        guard rights.allow(.read, mode: info.st_mode, owner: info.st_uid, group: info.st_gid) else {
            return "\(path): \(who) may not read it"
        }
        return nil
    }

    private static func openedPath(_ fd: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        guard count > 0, buffer[0] == 0x2F else { return nil }  // "/": not a pipe:[…] or the like
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A file system call that failed: which, on what, and errno.
package struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    package var operation: String
    package var path: String
    package var code: Int32

    package init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// A Foundation file call's error, by the errno underneath it (EIO when it names none).
    package init(operation: String, path: String, error: any Error) {
        let posix = (error as? CocoaError)?.underlying as? POSIXError
        self.init(operation: operation, path: path, code: posix?.code.rawValue ?? EIO)
    }

    /// The file system has no room (or the process may not make the file larger).
    package var isNoSpace: Bool { self.code == ENOSPC || self.code == EDQUOT || self.code == EFBIG }

    package var description: String {
        let reason = String(cString: strerror(self.code))
        return self.path.isEmpty
            ? "cannot \(self.operation): \(reason)" : "cannot \(self.operation) \(self.path): \(reason)"
    }
}

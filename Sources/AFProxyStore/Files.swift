import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The two whole-file operations the stores share, done by Foundation rather than by hand, with
/// failures as `FileError`s (errno and path) for the messages and the state-file report.
package enum Files {
    /// A whole file through Foundation's reader, which reads to the end of files that report a
    /// size of 0 (`/proc`, sysfs) too; nil when there is no file.
    package static func contents(of path: String) throws(FileError) -> Data? {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let failure = FileError(operation: "read", path: path, error: error)
            if failure.code == ENOENT { return nil }
            throw failure
        }
    }

    /// `mkdir -p` with mode 0700 for what it creates: state and runtime directories name files,
    /// URLs and sockets of their user.
    package static func makeDirectory(_ path: String) throws(FileError) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw FileError(operation: "create the directory", path: path, error: error)
        }
    }

    /// Replaces the file at `path` with `data` atomically: a temporary file, fsync, rename, fsync
    /// of the directory, so a crash leaves the old version or the new one, never a torn one
    /// (Foundation's `.atomic` write renames but does not fsync).
    package static func replace(_ path: String, with data: Data) throws(FileError) {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileError(operation: "create", path: temporary, code: errno) }
        defer { close(descriptor) }
        let failure: Int32? = data.withUnsafeBytes { bytes in
            Self.writeAll(descriptor, bytes) ?? (fsync(descriptor) == 0 ? nil : errno)
        }
        if let failure {
            unlink(temporary)
            throw FileError(operation: "write", path: temporary, code: failure)
        }
        guard rename(temporary, path) == 0 else { throw FileError(operation: "rename", path: temporary, code: errno) }
        PartialFile.syncDirectory(of: path)
    }

    /// Writes every byte of `bytes` to `descriptor`, across short writes and signals; answers the
    /// errno of a failure, nil when all were written.
    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var done = 0
        return Self.writeAll(descriptor, bytes, done: &done)
    }

    /// `writeAll`, counting in `done` the bytes that were written, those before a failure too.
    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, done: inout Int) -> Int32? {
        done = 0
        while done < bytes.count {
            let count = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if count < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += count
        }
        return nil
    }
}

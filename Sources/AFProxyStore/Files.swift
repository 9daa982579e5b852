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
}

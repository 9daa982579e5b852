#if canImport(Glibc)
import Glibc
#endif

/// Whether the daemon can make a download's file where it was asked to: checked when the
/// download is asked for, so that a person hears "cannot write there" at once rather than from
/// a task that fails later.
package enum DownloadTarget {
    /// Nil when `path` can be made (replaced with `force`), else why not, for a person.
    /// `writableHint` says what the daemon may write to when that is narrower than the user's
    /// rights (the system service's state directory).
    package static func refusal(for path: String, force: Bool, writableHint: String?) -> String? {
        guard path.hasPrefix("/"), !path.hasSuffix("/") else {
            return "the path must be absolute and name a file: \(path)"
        }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "/"
        var status = stat()
        guard stat(directory, &status) == 0 else {
            return "cannot write to \(directory): \(String(cString: strerror(errno)))"
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { return "\(directory) is not a directory" }
        if access(directory, W_OK | X_OK) != 0 {
            let reason = String(cString: strerror(errno))
            let hint = writableHint.map { " (\($0))" } ?? ""
            return "the daemon (uid \(getuid())) cannot write to \(directory): \(reason)\(hint)"
        }
        if lstat(path, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR { return "\(path) is a directory" }
            if !force { return "\(path) exists (--force replaces it)" }
        }
        return nil
    }
}

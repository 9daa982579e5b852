import AFProxyModel

#if canImport(Glibc)
import Glibc
#endif

/// A download's bytes on their way to its file: they go to `PATH.afpart` at the offset reached,
/// and the file at `PATH` appears only complete — length checked, checksum checked, synced, then
/// renamed in one step — so that a reader, a crash or a full disk never meets half a file under
/// the name it asked for.
///
/// Used by one job at a time, as its task's contract orders (its lane on the I/O executor):
/// hence `@unchecked Sendable`.
package final class PartialFile: @unchecked Sendable {
    /// Where the complete file goes: named by the answer (`Content-Disposition`) for a URL that
    /// names no file, so it may change before `finish`.
    package var target: String
    package private(set) var path: String
    private var descriptor: Int32 = -1

    /// `path` defaults to the target's name with `.afpart`.
    package init(target: String, path: String? = nil) {
        self.target = target
        self.path = path ?? target + ".afpart"
    }

    deinit {
        if self.descriptor >= 0 { Glibc.close(self.descriptor) }
    }

    /// Opens (or makes) the partial file and answers its length: after a crash, the truth about
    /// how far the download got.
    @discardableResult
    package func open() throws(FileError) -> Int64 {
        if self.descriptor < 0 {
            let descriptor = Glibc.open(self.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw FileError(operation: "open", path: self.path, code: errno) }
            self.descriptor = descriptor
        }
        var status = stat()
        guard fstat(self.descriptor, &status) == 0 else {
            throw FileError(operation: "stat", path: self.path, code: errno)
        }
        return Int64(status.st_size)
    }

    /// The length of the partial file if there is one, without making it.
    package static func length(of path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int64(status.st_size)
    }

    /// Why a new download could not open the partial file an earlier one left at `path`, or nil
    /// (none there, or one it can open): asked when the download is, before the file is emptied.
    package static func unusable(_ path: String) -> FileError? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        if status.st_mode & S_IFMT == S_IFDIR { return FileError(operation: "open", path: path, code: EISDIR) }
        guard access(path, R_OK | W_OK) == 0 else { return FileError(operation: "open", path: path, code: errno) }
        return nil
    }

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(FileError) {
        if self.descriptor < 0 { try self.open() }
        var done = 0
        while done < bytes.count {
            let count = pwrite(
                self.descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(operation: "write", path: self.path, code: errno)
            }
            done += count
        }
    }

    package func write(_ bytes: [UInt8], at offset: Int64) throws(FileError) {
        let failure = bytes.withUnsafeBytes { bytes -> FileError? in
            do throws(FileError) {
                try self.write(bytes, at: offset)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Names the file anew (the answer named it): the partial file moves beside the new target.
    package func retarget(_ target: String) throws(FileError) {
        let path = target + ".afpart"
        guard rename(self.path, path) == 0 || errno == ENOENT else {
            throw FileError(operation: "rename to \(path)", path: self.path, code: errno)
        }
        self.target = target
        self.path = path
    }

    /// Throws the bytes so far away: a download that starts again from 0.
    package func truncate() throws(FileError) {
        if self.descriptor < 0 { try self.open() }
        guard ftruncate(self.descriptor, 0) == 0 else {
            throw FileError(operation: "truncate", path: self.path, code: errno)
        }
    }

    /// Checks the complete file (its length against `length`, its SHA-256 against `sha256`),
    /// syncs it and, if `renameDue` still agrees (a cancel may have come during the check),
    /// renames it to the target, then syncs the directory so the rename survives a power loss
    /// too. Answers whether it renamed.
    @discardableResult
    package func finish(
        length: Int64?, sha256: String?, renameDue: () -> Bool = { true }
    ) throws(TaskFailure) -> Bool {
        let actual = try Self.failure { () throws(FileError) in try self.open() }
        if let length, actual != length {
            throw .lengthMismatch("the file has \(actual) bytes where the origin announced \(length)")
        }
        if let sha256 {
            let digest = try Self.failure { () throws(FileError) in try FileDigest.sha256(of: self.descriptor) }
            guard digest == sha256.lowercased() else {
                throw .checksumMismatch("the file's SHA-256 is \(digest), not the expected \(sha256.lowercased())")
            }
        }
        try Self.failure { () throws(FileError) in
            guard fsync(self.descriptor) == 0 else { throw FileError(operation: "sync", path: self.path, code: errno) }
        }
        guard renameDue() else { return false }
        try Self.failure { () throws(FileError) in
            guard rename(self.path, self.target) == 0 else {
                throw FileError(operation: "rename to \(self.target)", path: self.path, code: errno)
            }
        }
        self.close()
        Self.syncDirectory(of: self.target)
        return true
    }

    /// A file error as the task's failure: no space is `disk-full`, anything else `file-error`.
    package static func failure<T>(_ body: () throws(FileError) -> T) throws(TaskFailure) -> T {
        do {
            return try body()
        } catch {
            throw error.isNoSpace ? .diskFull(error.description) : .fileError(error.description)
        }
    }

    package func close() {
        guard self.descriptor >= 0 else { return }
        Glibc.close(self.descriptor)
        self.descriptor = -1
    }

    /// Removes the partial file (a canceled or failed download that was not told to keep it).
    package func remove() {
        self.close()
        unlink(self.path)
    }

    static func syncDirectory(of path: String) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let descriptor = Glibc.open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        Glibc.close(descriptor)
    }
}

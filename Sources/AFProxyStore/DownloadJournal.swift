import AFProxyModel
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The download queue as it must survive a restart, `downloads.json` in the state directory:
/// every download task's `DownloadEntry`, rewritten whole and replaced atomically (a temporary
/// file, fsync, rename, fsync of the directory) on a lane of the I/O executor, so a task never
/// waits on the disk and a crash leaves the old version or the new one, never a torn one.
///
/// A journal of whole snapshots rather than SQLite (GRDB): the queue is a few dozen entries that
/// change together with their task, read once at start; a rename gives the atomicity a database
/// would, with no dependency to build in every CI run and no schema to migrate.
package final class DownloadJournal: Sendable {
    package let directory: String
    package let path: String
    /// Completed downloads kept for the history after a restart, newest first.
    package let completedLimit: Int
    private let entries = Locked<State>(State())
    private let lane = IOExecutor.shared.lane()

    struct State {
        var entries: [Int: DownloadEntry] = [:]
        var writeScheduled = false
        var lastError: String?
    }

    package init(directory: String, completedLimit: Int = 200) {
        self.directory = directory
        self.path = directory + "/downloads.json"
        self.completedLimit = completedLimit
    }

    /// Makes the directory if needed and reads what a previous run left; an absent journal is an
    /// empty queue.
    package func load() throws(FileError) -> [DownloadEntry] {
        try Files.makeDirectory(self.directory)
        guard let data = try Files.contents(of: self.path) else { return [] }
        let entries: [DownloadEntry]
        do {
            entries = try JSONDecoder.journal.decode([DownloadEntry].self, from: data)
        } catch {
            // A journal this version cannot read is kept for a person to look at, not overwritten.
            rename(self.path, self.path + ".unreadable")
            throw FileError(
                operation: "read the download journal (kept as downloads.json.unreadable)", path: self.path,
                code: EINVAL)
        }
        self.entries.withLock { state in
            for entry in entries { state.entries[entry.id] = entry }
        }
        return entries.sorted { $0.id < $1.id }
    }

    /// Replaces the entry with its id and writes the journal soon.
    package func update(_ entry: DownloadEntry) {
        let schedule = self.entries.withLock { state in
            state.entries[entry.id] = entry
            defer { state.writeScheduled = true }
            return !state.writeScheduled
        }
        if schedule { self.lane.submit { self.write() } }
    }

    /// Writes what is pending now and returns when it is on disk (the daemon's stop): after
    /// the writes already queued, so none is left half done when the process exits.
    package func flush() {
        self.lane.wait { self.write() }
    }

    /// The last write's failure, if it failed (`afproxyctl status` may show it).
    package var lastError: String? { self.entries.withLock { $0.lastError } }

    private func write() {
        let snapshot = self.entries.withLock { state -> [DownloadEntry] in
            state.writeScheduled = false
            let completed = state.entries.values.filter { $0.state == .completed }.sorted { $0.id > $1.id }
            for old in completed.dropFirst(self.completedLimit) { state.entries.removeValue(forKey: old.id) }
            return state.entries.values.sorted { $0.id < $1.id }
        }
        do throws(FileError) {
            let data: Data
            do {
                data = try JSONEncoder.journal.encode(snapshot)
            } catch {
                throw FileError(operation: "encode the download journal", path: self.path, code: EINVAL)
            }
            try Self.replace(self.path, with: data)
            self.entries.withLock { $0.lastError = nil }
        } catch {
            self.entries.withLock { $0.lastError = error.description }
        }
    }

    static func replace(_ path: String, with data: Data) throws(FileError) {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileError(operation: "create", path: temporary, code: errno) }
        defer { close(descriptor) }
        let failure: Int32? = data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let count = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                done += count
            }
            return fsync(descriptor) == 0 ? nil : errno
        }
        if let failure {
            unlink(temporary)
            throw FileError(operation: "write", path: temporary, code: failure)
        }
        guard rename(temporary, path) == 0 else { throw FileError(operation: "rename", path: temporary, code: errno) }
        PartialFile.syncDirectory(of: path)
    }
}

extension JSONEncoder {
    fileprivate static var journal: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

extension JSONDecoder {
    fileprivate static var journal: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

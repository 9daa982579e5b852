import AFProxyModel
import Logging

/// The download queue as it must survive a restart, `downloads.json` in the state directory:
/// every download task's `DownloadEntry`, kept by the one state-file type (`StateFile`): written
/// whole, coalesced and replaced atomically on the I/O executor, so a task never waits on the
/// disk and a crash leaves the old version or the new one; an unreadable journal is kept aside
/// and a failed write logged and shown in `afproxyctl status`, as for the rule files.
///
/// A journal of whole snapshots rather than SQLite (GRDB): the queue is a few dozen entries that
/// change together with their task, read once at start; a rename gives the atomicity a database
/// would, with no dependency to build in every CI run and no schema to migrate.
package final class DownloadJournal: AnyStateFile {
    package let directory: String
    /// Completed downloads kept for the history after a restart, newest first.
    package let completedLimit: Int
    private let file: StateFile<[DownloadEntry]>
    private let entries = Locked<[Int: DownloadEntry]>([:])

    package init(directory: String, completedLimit: Int = 200, logger: Logger? = nil) {
        self.directory = directory
        self.completedLimit = completedLimit
        self.file = StateFile(directory: directory, name: "downloads.json", logger: logger)
    }

    package var name: String { self.file.name }
    package var path: String { self.file.path }
    /// A failed write or an unreadable journal kept aside, as `afproxyctl status` shows it.
    package var problem: String? { self.file.problem }

    /// Makes the directory if needed and reads what a previous run left; an absent journal is an
    /// empty queue, and so is an unreadable one (kept aside as `downloads.json.unreadable`).
    package func load() throws(FileError) -> [DownloadEntry] {
        try Files.makeDirectory(self.directory)
        let entries = self.file.load() ?? []
        self.entries.withLock { state in
            for entry in entries { state[entry.id] = entry }
        }
        return entries.sorted { $0.id < $1.id }
    }

    /// Replaces the entry with its id and writes the journal soon. Only the newest
    /// `completedLimit` completed entries are kept.
    package func update(_ entry: DownloadEntry) {
        let snapshot = self.entries.withLock { entries -> [DownloadEntry] in
            entries[entry.id] = entry
            if entry.state == .completed {
                let completed = entries.values.filter { $0.state == .completed }.sorted { $0.id > $1.id }
                for old in completed.dropFirst(self.completedLimit) { entries.removeValue(forKey: old.id) }
            }
            return entries.values.sorted { $0.id < $1.id }
        }
        self.file.save(snapshot)
    }

    /// Returns once what was updated is on disk or failed (the daemon's stop).
    package func flush() {
        self.file.flush()
    }
}

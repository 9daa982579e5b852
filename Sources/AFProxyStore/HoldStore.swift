import AFProxyModel
import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The hold rules as they must survive a restart, `holds.json` in the state directory: the whole
/// `HoldRuleSet` (its `nextID` with it, so an id is never given twice), replaced atomically as
/// the download journal is (`DownloadJournal.replace`) on a queue of its own: a `--once` rule is
/// consumed on a client connection's event loop, which must not wait for the disk.
package final class HoldStore: Sendable {
    package let directory: String
    package let path: String
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "afproxy.hold-store")

    private struct State {
        /// The latest set not yet written; nil when the file is up to date.
        var pending: HoldRuleSet?
        var lastError: String?
    }

    package init(directory: String) {
        self.directory = directory
        self.path = directory + "/holds.json"
    }

    /// What a previous run left; no file is no rule. A file this version cannot read is kept
    /// aside (`holds.json.unreadable`) for a person to look at, and the error says so.
    package func load() throws(FileError) -> HoldRuleSet {
        try DownloadJournal.makeDirectory(self.directory)
        guard let data = try DownloadJournal.read(self.path) else { return HoldRuleSet() }
        do {
            return try JSONDecoder().decode(HoldRuleSet.self, from: data)
        } catch {
            rename(self.path, self.path + ".unreadable")
            throw FileError(
                operation: "read the hold rules (kept as holds.json.unreadable)", path: self.path, code: EINVAL)
        }
    }

    /// Writes `rules` soon; a later save before the write replaces it (the last one wins).
    package func save(_ rules: HoldRuleSet) {
        let schedule = self.state.withLock { state in
            defer { state.pending = rules }
            return state.pending == nil
        }
        if schedule { self.queue.async { self.write() } }
    }

    /// Returns once what was saved is on disk (the daemon's stop, and tests).
    package func flush() {
        self.queue.sync { self.write() }
    }

    /// The last write's failure, if it failed.
    package var lastError: String? { self.state.withLock { $0.lastError } }

    private func write() {
        guard
            let rules = self.state.withLock({ state in
                defer { state.pending = nil }; return state.pending
            })
        else {
            return
        }
        do throws(FileError) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            let data: Data
            do {
                data = try encoder.encode(rules)
            } catch {
                throw FileError(operation: "encode the hold rules", path: self.path, code: EINVAL)
            }
            try DownloadJournal.makeDirectory(self.directory)
            try DownloadJournal.replace(self.path, with: data)
            self.state.withLock { $0.lastError = nil }
        } catch {
            self.state.withLock { $0.lastError = error.description }
        }
    }
}

import AFProxyModel
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The throttle rules set at runtime, `throttle.json` in the state directory, so that host and
/// global rules survive a reload and a restart: rewritten whole and replaced atomically, as the
/// download journal is. Rules change when a person changes them, rarely, so the write is
/// synchronous. Task rules are not kept: the tasks they name end with the daemon.
package final class ThrottleStore: Sendable {
    package let path: String
    private let directory: String

    package struct Contents: Sendable, Codable, Equatable {
        package var rules: [ThrottleRule]
        /// Defaults of the configuration file lifted at runtime (`unthrottle --global`).
        package var lifted: [ThrottleScope]

        package init(rules: [ThrottleRule] = [], lifted: [ThrottleScope] = []) {
            self.rules = rules
            self.lifted = lifted
        }
    }

    package init(directory: String) {
        self.directory = directory
        self.path = directory + "/throttle.json"
    }

    /// What a previous run left; nothing when there is no file. A file this version cannot read
    /// is kept aside (`throttle.json.unreadable`) and an error thrown for the log.
    package func load() throws(FileError) -> Contents {
        guard let data = try DownloadJournal.read(self.path) else { return Contents() }
        do {
            return try JSONDecoder().decode(Contents.self, from: data)
        } catch {
            rename(self.path, self.path + ".unreadable")
            throw FileError(
                operation: "read the throttle rules (kept as throttle.json.unreadable)", path: self.path, code: EINVAL)
        }
    }

    package func save(_ contents: Contents) throws(FileError) {
        try DownloadJournal.makeDirectory(self.directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data: Data
        do {
            data = try encoder.encode(contents)
        } catch {
            throw FileError(operation: "encode the throttle rules", path: self.path, code: EINVAL)
        }
        try DownloadJournal.replace(self.path, with: data)
    }
}

import AFProxyModel
import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// One file of the state directory that keeps a set of rules across restarts (`throttle.json`,
/// `holds.json`): every such file is read, written and reported the same way here, so a new rule
/// kind only names its file and its value.
///
/// - Writes are coalesced and made on `StateFiles.lane` (the I/O executor), never by the caller: a rule can change
///   on a client connection's event loop (a `--once` hold is used up there) or the control
///   socket's, which must not wait for an fsync. A save while a write is pending replaces the
///   pending value; the last one wins.
/// - A write replaces the file atomically (temporary file, fsync, rename, fsync of the
///   directory), so a crash leaves the old version or the new one.
/// - A file that cannot be read at start is kept aside (`NAME.unreadable`) for a person to look
///   at, said in the log, and the daemon starts without its contents.
/// - A failed write is logged once and stays in `problem` (which `afproxyctl status` shows)
///   until a later write succeeds.
package final class StateFile<Value: Codable & Sendable>: AnyStateFile {
    package let name: String
    package let path: String
    private let directory: String
    private let logger: Logger?
    private let state = Locked(State())

    private struct State {
        /// The latest value not yet written; nil when the file is up to date.
        var pending: Value?
        var problem: String?
    }

    /// `name` in `directory`; failures are logged to `logger` as well as kept in `problem`.
    package init(directory: String, name: String, logger: Logger? = nil) {
        self.directory = directory
        self.name = name
        self.path = directory + "/" + name
        self.logger = logger
    }

    /// What a previous run left; nil when there is no file, or when it cannot be read (then it is
    /// kept aside, logged and reported, and the caller starts empty).
    package func load() -> Value? {
        let data: Data
        do throws(FileError) {
            guard let read = try Files.contents(of: self.path) else { return nil }
            data = read
        } catch {
            self.setAside(because: error.description)
            return nil
        }
        do {
            return try StateFiles.decoder.decode(Value.self, from: data)
        } catch {
            self.setAside(because: "not understood by this version")
            return nil
        }
    }

    /// Writes `value` soon, off the caller's thread.
    package func save(_ value: Value) {
        let schedule = self.state.withLock { state in
            defer { state.pending = value }
            return state.pending == nil
        }
        if schedule { StateFiles.lane.submit { self.write() } }
    }

    /// Returns once what was saved is on disk or failed (the daemon's stop, and tests). Not from
    /// `StateFiles.lane` itself.
    package func flush() {
        StateFiles.lane.wait { self.write() }
    }

    /// Why the file does not hold what is in force (a failed write, an unreadable file kept
    /// aside at start); nil when it does.
    package var problem: String? { self.state.withLock { $0.problem } }

    private func setAside(because reason: String) {
        let aside = self.path + ".unreadable"
        let kept = rename(self.path, aside) == 0
        let problem = "unreadable at start (\(reason))" + (kept ? ", kept as \(self.name).unreadable" : "")
        self.state.withLock { $0.problem = problem }
        let keptAside = kept ? ", kept as \(aside)" : ""
        self.logger?.error("state file \(self.path) unreadable (\(reason))\(keptAside); starting without its contents")
    }

    private func write() {
        guard
            let value = self.state.withLock({ state in
                defer { state.pending = nil }; return state.pending
            })
        else { return }
        let failure: FileError?
        do throws(FileError) {
            let data: Data
            do {
                data = try StateFiles.encoder.encode(value)
            } catch {
                throw FileError(operation: "encode", path: self.path, code: EINVAL)
            }
            try Files.makeDirectory(self.directory)
            try Files.replace(self.path, with: data)
            failure = nil
        } catch {
            failure = error
        }
        let problem = failure.map { "write failed: \($0)" }
        let before = self.state.withLock { state in
            defer { state.problem = problem }
            return state.problem
        }
        if let failure, before != problem {
            self.logger?.error("state file \(self.name) not written, it keeps its previous contents: \(failure)")
        } else if failure == nil, before != nil {
            self.logger?.notice("state file \(self.path) written again")
        }
    }
}

/// What every state file shares: the one lane their writes run on, and the one JSON
/// configuration they are written and read with.
package enum StateFiles {
    /// One lane of the I/O executor for every state file: rule changes are rare and small, and
    /// one lane keeps each file's writes in the order of its changes.
    package static let lane = IOExecutor.shared.lane()

    /// Sorted and indented, so a person can read and diff the file; slashes unescaped (URL patterns).
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Every file's problem, by file name, for the daemon's status; nil when there is none.
    package static func problems(_ files: [any AnyStateFile]) -> [String: String]? {
        var problems: [String: String] = [:]
        for file in files {
            if let problem = file.problem { problems[file.name] = problem }
        }
        return problems.isEmpty ? nil : problems
    }
}

/// A state file whatever it holds, as the daemon's stop and its status see it.
package protocol AnyStateFile: Sendable {
    var name: String { get }
    var problem: String? { get }
    func flush()
}

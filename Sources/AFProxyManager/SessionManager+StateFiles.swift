import AFProxyStore

/// The rule sets' state files, listed once: the daemon's stop writes what is pending in each, and
/// `afproxyctl status` shows those that do not hold what is in force.
extension SessionManager {
    private var stateFiles: [any AnyStateFile] { self.rules.stateFiles }

    /// Returns once every change made so far is on disk or has failed (the daemon's stop).
    package func flushStateFiles() {
        for file in self.stateFiles { file.flush() }
    }

    /// By file name, the reason; nil when every file is as it should be.
    func stateFileProblems() -> [String: String]? {
        var problems = StateFiles.problems(self.stateFiles) ?? [:]
        // The download journal has its own writer; its last failure is shown the same way.
        if let error = self.downloads.journal?.lastError { problems["downloads.json"] = "write failed: \(error)" }
        return problems.isEmpty ? nil : problems
    }
}

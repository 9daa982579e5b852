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
        if let problem = self.downloads.journal?.problem { problems["downloads.json"] = problem }
        return problems.isEmpty ? nil : problems
    }
}

import FoundationEssentials

/// One capture running now (`afproxyctl run`), as `GET /v1/status` lists it.
package struct CaptureSummary: Sendable, Codable, Equatable {
    package var id: Int
    package var name: String
    /// The command's process id and command line, as afproxyctl reported them.
    package var pid: Int
    package var commandLine: String
    package var intercept: Bool
    package var startedAt: Date

    package init(id: Int, name: String, pid: Int, commandLine: String, intercept: Bool, startedAt: Date) {
        self.id = id
        self.name = name
        self.pid = pid
        self.commandLine = commandLine
        self.intercept = intercept
        self.startedAt = startedAt
    }
}

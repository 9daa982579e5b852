/// Bodies of the control API besides task records and stats, shared by the daemon and afproxyctl.
package struct TaskList: Sendable, Codable, Equatable {
    package var tasks: [TaskRecord]

    package init(tasks: [TaskRecord]) {
        self.tasks = tasks
    }
}

/// Every refusal of the control API: `{"error": "..."}` with the HTTP status saying which kind.
package struct ControlErrorBody: Sendable, Codable, Equatable {
    package var error: String

    package init(error: String) {
        self.error = error
    }
}

/// `POST /v1/downloads`: a download to start. `path` is absolute (afproxyctl resolves `-o`
/// against its caller's directory); nil puts the URL's file name in the download directory.
package struct DownloadRequestBody: Sendable, Codable, Equatable {
    package var url: String
    package var path: String?
    /// `Name: value` lines sent with every attempt.
    package var headers: [String]?
    package var sha256: String?
    package var force: Bool?
    package var keepPartial: Bool?

    package init(
        url: String, path: String? = nil, headers: [String]? = nil, sha256: String? = nil, force: Bool? = nil,
        keepPartial: Bool? = nil
    ) {
        self.url = url
        self.path = path
        self.headers = headers
        self.sha256 = sha256
        self.force = force
        self.keepPartial = keepPartial
    }
}

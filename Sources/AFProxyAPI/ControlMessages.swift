import AFProxyModel

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
    /// `sha256//…` pins the origin's key must match, in place of its host's from the config.
    package var pins: [String]?
    /// Skip TLS verification for this download only.
    package var insecure: Bool?

    package init(
        url: String, path: String? = nil, headers: [String]? = nil, sha256: String? = nil, force: Bool? = nil,
        keepPartial: Bool? = nil, pins: [String]? = nil, insecure: Bool? = nil
    ) {
        self.url = url
        self.path = path
        self.headers = headers
        self.sha256 = sha256
        self.force = force
        self.keepPartial = keepPartial
        self.pins = pins
        self.insecure = insecure
    }
}

/// `GET /v1/pin`: the pin of the key `host:port` presents now, as a `pin` config line takes it.
package struct PinAnswer: Sendable, Codable, Equatable {
    package var host: String
    package var port: Int
    package var pin: String

    package init(host: String, port: Int, pin: String) {
        self.host = host
        self.port = port
        self.pin = pin
    }
}

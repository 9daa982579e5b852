import AFProxyModel
import AFProxyRules

/// How the daemon runs download tasks: its keys `state-dir`, `download-dir`,
/// `max-active-downloads`, `download-retries` (what they trust is the manager's `TransferTrust`).
package struct DownloadSettings: Sendable, Equatable {
    /// Where the download journal lives; nil: downloads do not survive a restart.
    package var stateDirectory: String?
    /// Where a download without `-o` goes.
    package var downloadDirectory: String
    package var maxActive: Int
    /// Attempts in a row that may move nothing before a download fails.
    package var retries: Int
    /// What the daemon may write to, when that is narrower than its user's rights (the system
    /// service: only its state directory); said when a directory is refused.
    package var writableHint: String?
    /// Sent when the download's own headers name no User-Agent: some origins refuse requests
    /// without one.
    package var userAgent: String

    package init(
        stateDirectory: String? = nil, downloadDirectory: String = "/tmp", maxActive: Int = 3, retries: Int = 10,
        writableHint: String? = nil, userAgent: String = "afproxy"
    ) {
        self.stateDirectory = stateDirectory
        self.downloadDirectory = downloadDirectory
        self.maxActive = maxActive
        self.retries = retries
        self.writableHint = writableHint
        self.userAgent = userAgent
    }

    var policy: DownloadStateMachine.Policy { .init(maxAttempts: self.retries) }
}

/// What a person asks for when starting a download (`POST /v1/downloads`), checked.
package struct DownloadSpec: Sendable, Equatable {
    package var url: String
    package var headers: HTTPHeaderList
    /// Absolute; nil: the URL's file name inside the download directory.
    package var path: String?
    package var sha256: String?
    package var force: Bool
    package var keepPartial: Bool
    /// In place of the host's pins from the config.
    package var pins: [String]?
    /// No TLS verification for this one download.
    package var insecure: Bool
    /// Who asked (`uid 1000`), for the record's client.
    package var client: String

    package init(
        url: String, headers: HTTPHeaderList = [], path: String? = nil, sha256: String? = nil, force: Bool = false,
        keepPartial: Bool = false, pins: [String]? = nil, insecure: Bool = false, client: String = "control"
    ) {
        self.url = url
        self.headers = headers
        self.path = path
        self.sha256 = sha256
        self.force = force
        self.keepPartial = keepPartial
        self.pins = pins
        self.insecure = insecure
        self.client = client
    }
}

import FoundationEssentials

/// What a download task's record shows of its file and its attempts.
package struct DownloadFile: Sendable, Codable, Equatable {
    /// Where the complete file appears, and only complete.
    package var path: String
    /// Where the bytes go as they arrive: `path` + ".afpart".
    package var partialPath: String
    /// The SHA-256 the file must have (lowercase hex), when one was given.
    package var sha256: String?
    /// A cancel or a failure leaves the partial file in place.
    package var keepPartial: Bool
    /// Attempts in a row that moved no byte, the current one included.
    package var attempt: Int
    /// `download-retries`: attempts in a row that may move nothing before the task fails.
    package var maxAttempts: Int
    /// Why the last attempt ended, while the task retries.
    package var lastError: String?
    /// Each time the bytes so far were thrown away and the download started again from 0.
    package var restarts: [Restart]
    /// TLS verification is off for this download (`--insecure`).
    package var insecure: Bool
    /// The download's own public-key pins (`--pin`), in place of its host's; nil: the host's.
    package var pins: [String]?

    package struct Restart: Sendable, Codable, Equatable {
        package var at: Date
        package var reason: String

        package init(at: Date, reason: String) {
            self.at = at
            self.reason = reason
        }
    }

    package init(
        path: String, sha256: String? = nil, keepPartial: Bool = false, attempt: Int = 0, maxAttempts: Int = 10,
        lastError: String? = nil, restarts: [Restart] = [], insecure: Bool = false, pins: [String]? = nil
    ) {
        self.path = path
        self.partialPath = path + ".afpart"
        self.sha256 = sha256
        self.keepPartial = keepPartial
        self.attempt = attempt
        self.maxAttempts = maxAttempts
        self.lastError = lastError
        self.restarts = restarts
        self.insecure = insecure
        self.pins = pins
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.path, forKey: .path)
        try container.encode(self.partialPath, forKey: .partialPath)
        try container.encode(self.sha256, forKey: .sha256)
        try container.encode(self.keepPartial, forKey: .keepPartial)
        try container.encode(self.attempt, forKey: .attempt)
        try container.encode(self.maxAttempts, forKey: .maxAttempts)
        try container.encode(self.lastError, forKey: .lastError)
        try container.encode(self.restarts, forKey: .restarts)
        try container.encode(self.insecure, forKey: .insecure)
        try container.encode(self.pins, forKey: .pins)
    }
}

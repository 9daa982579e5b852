import AFProxyModel
import FoundationEssentials

/// What the store keeps of one download task: enough to restore it after a restart or a crash
/// with the same id, where it stood (suspended stays suspended), and the version its partial
/// bytes belong to; the partial file's length then says how far it got.
package struct DownloadEntry: Sendable, Codable, Equatable {
    package var id: Int
    package var url: String
    package var headers: HTTPHeaderList
    package var path: String
    /// Where the bytes are gathered; nil: `path` + ".afpart". It differs once the answer named the file.
    package var partialPath: String?
    /// The path was not given: the answer's `Content-Disposition` may still name the file.
    package var namedByAnswer: Bool?
    package var sha256: String?
    package var keepPartial: Bool
    package var insecure: Bool?
    package var pins: [String]?
    package var createdAt: Date
    /// running (queued or not), suspended, or completed.
    package var state: TaskState
    package var validator: ResourceValidator?
    package var total: Int64?
    /// Bytes in the partial file when this was written (a restart trusts the file instead).
    package var offset: Int64
    package var failuresInARow: Int
    package var lastError: String?
    package var resumes: [TaskResume]
    package var restarts: [DownloadFile.Restart]
    /// Once completed: the answer's status and head, and the failure if any.
    package var status: Int?
    package var responseHeaders: HTTPHeaderList?
    package var error: String?
    package var errorCode: String?
    package var completedAt: Date?
    /// The hold rule that created it suspended, until it is resumed: a restart keeps it held
    /// as it was, without asking the rules again.
    package var heldBy: Int?

    package init(
        id: Int, url: String, headers: HTTPHeaderList, path: String, partialPath: String? = nil,
        namedByAnswer: Bool? = nil, sha256: String?, keepPartial: Bool, insecure: Bool? = nil, pins: [String]? = nil,
        createdAt: Date, state: TaskState = .running, validator: ResourceValidator? = nil, total: Int64? = nil,
        offset: Int64 = 0, failuresInARow: Int = 0, lastError: String? = nil, resumes: [TaskResume] = [],
        restarts: [DownloadFile.Restart] = [], status: Int? = nil, responseHeaders: HTTPHeaderList? = nil,
        error: String? = nil, errorCode: String? = nil, completedAt: Date? = nil,
        heldBy: Int? = nil
    ) {
        self.id = id
        self.url = url
        self.headers = headers
        self.path = path
        self.partialPath = partialPath
        self.namedByAnswer = namedByAnswer
        self.sha256 = sha256
        self.keepPartial = keepPartial
        self.insecure = insecure
        self.pins = pins
        self.createdAt = createdAt
        self.state = state
        self.validator = validator
        self.total = total
        self.offset = offset
        self.failuresInARow = failuresInARow
        self.lastError = lastError
        self.resumes = resumes
        self.restarts = restarts
        self.status = status
        self.responseHeaders = responseHeaders
        self.error = error
        self.errorCode = errorCode
        self.completedAt = completedAt
        self.heldBy = heldBy
    }
}

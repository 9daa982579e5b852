import FoundationEssentials

/// What the control API shows of a task: a snapshot taken from its delegate, or its final form
/// in the history once it completed. The JSON shape is documented in the README.
public struct TaskRecord: Sendable, Codable, Equatable {
    public var id: Int
    public var kind: TaskKind
    public var state: TaskState
    public var method: String
    /// The absolute URL, or `host:port` for a tunnel.
    public var url: String
    public var client: String
    public var createdAt: Date
    public var status: Int?
    public var error: String?
    /// The stable code of `error`'s cause (`TaskFailure.code`: "canceled", "dns-failure",
    /// "upstream-bad-response", …): what scripts match on, where `error` is for people. Null
    /// while running and after success.
    public var errorCode: String?
    public var upload: TransferProgress
    public var download: TransferProgress
    public var metrics: TaskMetrics
    public var requestHeaders: HTTPHeaderList
    public var responseHeaders: HTTPHeaderList?
    /// Why a stream task (a tunnel) ended once it completed, failure or not ("client closed",
    /// "upstream closed", "canceled", …); nil for the other kinds and while it runs.
    public var endReason: String?

    public init(
        id: Int, kind: TaskKind, state: TaskState, method: String, url: String, client: String,
        createdAt: Date, status: Int? = nil, error: String? = nil, errorCode: String? = nil, upload: TransferProgress = .init(),
        download: TransferProgress = .init(), metrics: TaskMetrics = .init(),
        requestHeaders: HTTPHeaderList = [], responseHeaders: HTTPHeaderList? = nil, endReason: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.state = state
        self.method = method
        self.url = url
        self.client = client
        self.createdAt = createdAt
        self.status = status
        self.error = error
        self.errorCode = errorCode
        self.upload = upload
        self.download = download
        self.metrics = metrics
        self.requestHeaders = requestHeaders
        self.responseHeaders = responseHeaders
        self.endReason = endReason
    }

    // Encode nil as null: clients see every documented key, with null for what is not known.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.kind, forKey: .kind)
        try container.encode(self.state, forKey: .state)
        try container.encode(self.method, forKey: .method)
        try container.encode(self.url, forKey: .url)
        try container.encode(self.client, forKey: .client)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.status, forKey: .status)
        try container.encode(self.error, forKey: .error)
        try container.encode(self.errorCode, forKey: .errorCode)
        try container.encode(self.upload, forKey: .upload)
        try container.encode(self.download, forKey: .download)
        try container.encode(self.metrics, forKey: .metrics)
        try container.encode(self.requestHeaders, forKey: .requestHeaders)
        try container.encode(self.responseHeaders, forKey: .responseHeaders)
        try container.encode(self.endReason, forKey: .endReason)
    }
}

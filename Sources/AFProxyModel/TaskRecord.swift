import FoundationEssentials

/// What the control API shows of a task: a snapshot taken from its delegate, or its final form
/// in the history once it completed. The JSON shape is documented in docs/control-api.md.
package struct TaskRecord: Sendable, Codable, Equatable {
    package var id: Int
    package var kind: TaskKind
    package var state: TaskState
    package var method: String
    /// The absolute URL, or `host:port` for a tunnel.
    package var url: String
    package var client: String
    package var createdAt: Date
    package var status: Int?
    package var error: String?
    /// The stable code of `error`'s cause (`TaskFailure.code`: "canceled", "dns-failure",
    /// "upstream-bad-response", …): what scripts match on, where `error` is for people. Null
    /// while running and after success.
    package var errorCode: String?
    package var upload: TransferProgress
    package var download: TransferProgress
    package var metrics: TaskMetrics
    package var requestHeaders: HTTPHeaderList
    package var responseHeaders: HTTPHeaderList?
    /// Why a stream task (a tunnel) ended once it completed, failure or not ("client closed",
    /// "upstream closed", "canceled", …); nil for the other kinds and while it runs.
    package var endReason: String?
    /// Why a task that is running moves no bytes now, for a person: "queued", "retrying in 4 s
    /// (attempt 2 of 10: …)", "waiting for network". Nil while it moves or may move bytes.
    package var waiting: String?
    /// Each time the task continued a broken-off response at the offset it had reached (a download
    /// task's retry, a proxied GET's transparent resume), as `didResumeAtOffset` reports it.
    package var resumes: [TaskResume]
    /// A download task's file; nil for the other kinds.
    package var file: DownloadFile?
    /// The `proxy-auth-file` user whose credentials the request or CONNECT carried; nil without
    /// proxy authentication. Never the credentials themselves.
    package var proxyUser: String?
    /// What throttle rule limits the task in each direction; nil when none applies.
    package var limit: TaskLimit?
    /// The hold rule that keeps the task suspended before it started; nil when none holds it
    /// (never caught, or released).
    package var heldBy: Int?
    /// The program on this machine that made the request (its connection's), when it was found.
    package var clientProcess: ClientProcess?
    /// The stream task of the intercepted connection an `https://` request came in; nil otherwise.
    package var parent: Int?
    /// How many requests an intercepted connection (a stream task) carried so far; nil for a
    /// plain tunnel and the other kinds.
    package var requests: Int?
    /// A plain tunnel's relay (`TunnelRelayKind`) once it is established; nil for the other
    /// kinds and an intercepted connection, whose bytes afproxy reads.
    package var relay: TunnelRelayKind?
    /// The bodies a record rule kept (`GET /v1/tasks/{id}/body`); nil when no rule matched.
    package var bodies: RecordedBodies?
    /// The task this one sends again (`POST /v1/tasks/{id}/replay`); nil for the others.
    package var replayOf: Int?
    /// The HTTP version the client spoke to afproxy: "1.0", "1.1", or "2" for a stream of an
    /// intercepted HTTP/2 connection (`metrics.httpVersion` is the origin's); nil when no client
    /// sent it.
    package var clientHTTPVersion: String?
    /// What a person changed before the task went on (`afproxyctl edit`, `respond`), in order.
    package var edits: [TaskEdit]

    package init(
        id: Int, kind: TaskKind, state: TaskState, method: String, url: String, client: String,
        createdAt: Date, status: Int? = nil, error: String? = nil, errorCode: String? = nil,
        upload: TransferProgress = .init(),
        download: TransferProgress = .init(), metrics: TaskMetrics = .init(),
        requestHeaders: HTTPHeaderList = [], responseHeaders: HTTPHeaderList? = nil, endReason: String? = nil,
        waiting: String? = nil, resumes: [TaskResume] = [], file: DownloadFile? = nil,
        proxyUser: String? = nil,
        limit: TaskLimit? = nil,
        heldBy: Int? = nil,
        clientProcess: ClientProcess? = nil, parent: Int? = nil, requests: Int? = nil,
        relay: TunnelRelayKind? = nil, bodies: RecordedBodies? = nil, replayOf: Int? = nil,
        edits: [TaskEdit] = [], clientHTTPVersion: String? = nil
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
        self.waiting = waiting
        self.resumes = resumes
        self.file = file
        self.proxyUser = proxyUser
        self.limit = limit
        self.heldBy = heldBy
        self.clientProcess = clientProcess
        self.parent = parent
        self.requests = requests
        self.relay = relay
        self.bodies = bodies
        self.replayOf = replayOf
        self.edits = edits
        self.clientHTTPVersion = clientHTTPVersion
    }

    // Encode nil as null: clients see every documented key, with null for what is not known.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.kind, forKey: .kind)
        try container.encode(self.state, forKey: .state)
        try container.encode(self.method, forKey: .method)
        try container.encode(self.url, forKey: .url)
        try container.encode(self.client, forKey: .client)
        try container.encode(self.clientHTTPVersion, forKey: .clientHTTPVersion)
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
        try container.encode(self.waiting, forKey: .waiting)
        try container.encode(self.resumes, forKey: .resumes)
        try container.encode(self.file, forKey: .file)
        try container.encode(self.proxyUser, forKey: .proxyUser)
        try container.encode(self.limit, forKey: .limit)
        try container.encode(self.heldBy, forKey: .heldBy)
        try container.encode(self.clientProcess, forKey: .clientProcess)
        try container.encode(self.parent, forKey: .parent)
        try container.encode(self.requests, forKey: .requests)
        try container.encode(self.relay, forKey: .relay)
        try container.encode(self.bodies, forKey: .bodies)
        try container.encode(self.replayOf, forKey: .replayOf)
        try container.encode(self.edits, forKey: .edits)
    }
}

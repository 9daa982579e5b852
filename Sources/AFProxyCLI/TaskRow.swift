import AFProxyAPI
import FoundationEssentials

/// A task as one line of a table (`afproxyctl list` and `watch`): only the fields of a task
/// record that the table shows and `list`'s filters match on, read from the same JSON
/// (`TaskRow+JSON.swift`). The table needs none of a record's headers, metrics, resumes or file
/// details, and decoding each of those for every task of a long list was most of what `list`
/// cost; its `--json` still prints whole records.
package struct TaskRow: Sendable, Equatable {
    package var id: Int
    package var kind: TaskKind
    package var state: TaskState
    package var method: String
    package var url: String
    package var createdAt: Date
    package var status: Int?
    package var error: String?
    package var upload: TransferProgress
    package var download: TransferProgress
    package var waiting: String?
    package var heldBy: Int?
    /// A download task's file skips TLS verification (`file.insecure` of the record).
    package var insecure: Bool
    package var limit: TaskLimit?
    package var clientProcess: ClientProcess?

    package init(
        id: Int, kind: TaskKind, state: TaskState, method: String, url: String, createdAt: Date,
        status: Int? = nil, error: String? = nil, upload: TransferProgress = .init(),
        download: TransferProgress = .init(), waiting: String? = nil, heldBy: Int? = nil, insecure: Bool = false,
        limit: TaskLimit? = nil, clientProcess: ClientProcess? = nil
    ) {
        self.id = id
        self.kind = kind
        self.state = state
        self.method = method
        self.url = url
        self.createdAt = createdAt
        self.status = status
        self.error = error
        self.upload = upload
        self.download = download
        self.waiting = waiting
        self.heldBy = heldBy
        self.insecure = insecure
        self.limit = limit
        self.clientProcess = clientProcess
    }

    /// The row of a record already decoded whole (`show`, an event's task, the tests).
    package init(_ record: TaskRecord) {
        self.init(
            id: record.id, kind: record.kind, state: record.state, method: record.method, url: record.url,
            createdAt: record.createdAt, status: record.status, error: record.error, upload: record.upload,
            download: record.download, waiting: record.waiting, heldBy: record.heldBy,
            insecure: record.file?.insecure ?? false, limit: record.limit, clientProcess: record.clientProcess)
    }
}

import AFProxyAPI
import FoundationEssentials

/// Rows read from the JSON of `GET /v1/tasks` (`TaskList.writeJSON`) with `JSONReader`: each
/// record's row fields are read and the rest (headers, metrics, resumes, most of `file`) passed
/// over unbuilt. A lean `Decodable` row through `JSONDecoder` still spent most of `list`'s time
/// mapping the whole document and every record's keys; this reads each byte once.
extension TaskRow {
    /// The rows of `{"tasks": [record…]}`; keys other than `tasks` are passed over.
    package static func list(fromJSON bytes: [UInt8]) throws -> [TaskRow] {
        var reader = JSONReader(bytes)
        var rows: [TaskRow]?
        try reader.object { reader, key in
            guard key == "tasks" else { return try reader.skip() }
            var list: [TaskRow] = []
            try reader.array { reader in list.append(try TaskRow(reading: &reader)) }
            rows = list
        }
        try reader.end()
        guard let rows else { throw reader.failure("no \"tasks\" list") }
        return rows
    }

    /// One record, its row's fields required as the record has them.
    package init(reading reader: inout JSONReader) throws {
        var id: Int?
        var kind: TaskKind?
        var state: TaskState?
        var method: String?
        var url: String?
        var createdAt: Date?
        var upload: TransferProgress?
        var download: TransferProgress?
        var status: Int?
        var error: String?
        var waiting: String?
        var heldBy: Int?
        var insecure = false
        var limit: TaskLimit?
        var clientProcess: ClientProcess?
        try reader.object { reader, key in
            switch key {
            case "id": id = try reader.int()
            case "kind": kind = try Self.value(TaskKind.self, &reader)
            case "state": state = try Self.value(TaskState.self, &reader)
            case "method": method = try reader.string()
            case "url": url = try reader.string()
            case "createdAt": createdAt = try reader.date()
            case "upload": upload = try Self.progress(&reader)
            case "download": download = try Self.progress(&reader)
            case "status": status = try reader.optional { try $0.int() }
            case "error": error = try reader.optional { try $0.string() }
            case "waiting": waiting = try reader.optional { try $0.string() }
            case "heldBy": heldBy = try reader.optional { try $0.int() }
            case "file":
                if reader.null() { return }
                try reader.object { reader, key in
                    guard key == "insecure" else { return try reader.skip() }
                    insecure = try reader.bool()
                }
            case "limit": limit = try reader.optional(Self.limit)
            case "clientProcess": clientProcess = try reader.optional(Self.clientProcess)
            default: try reader.skip()
            }
        }
        guard let id, let kind, let state, let method, let url, let createdAt, let upload, let download else {
            throw reader.failure("a task without id, kind, state, method, url, createdAt, upload or download")
        }
        self.init(
            id: id, kind: kind, state: state, method: method, url: url, createdAt: createdAt, status: status,
            error: error, upload: upload, download: download, waiting: waiting, heldBy: heldBy, insecure: insecure,
            limit: limit, clientProcess: clientProcess)
    }

    private static func value<T: RawRepresentable>(_ type: T.Type, _ reader: inout JSONReader) throws -> T
    where T.RawValue == String {
        let text = try reader.string()
        guard let value = T(rawValue: text) else { throw reader.failure("unknown value \(text)") }
        return value
    }

    private static func progress(_ reader: inout JSONReader) throws -> TransferProgress {
        var completed: Int64?
        var total: Int64?
        try reader.object { reader, key in
            switch key {
            case "completed": completed = try reader.integer()
            case "total": total = try reader.optional { try $0.integer() }
            default: try reader.skip()
            }
        }
        guard let completed else { throw reader.failure("a progress without completed") }
        return TransferProgress(completed: completed, total: total)
    }

    private static func limit(_ reader: inout JSONReader) throws -> TaskLimit {
        var limit = TaskLimit()
        try reader.object { reader, key in
            switch key {
            case "down": limit.down = try reader.optional(Self.limitEntry)
            case "up": limit.up = try reader.optional(Self.limitEntry)
            default: try reader.skip()
            }
        }
        return limit
    }

    private static func limitEntry(_ reader: inout JSONReader) throws -> TaskLimit.Entry {
        var rate: Int64?
        var rule: String?
        try reader.object { reader, key in
            switch key {
            case "bytesPerSecond": rate = try reader.integer()
            case "rule": rule = try reader.string()
            default: try reader.skip()
            }
        }
        guard let rate, let rule else { throw reader.failure("a limit without bytesPerSecond or rule") }
        return TaskLimit.Entry(bytesPerSecond: rate, rule: rule)
    }

    private static func clientProcess(_ reader: inout JSONReader) throws -> ClientProcess {
        var process = ClientProcess()
        try reader.object { reader, key in
            switch key {
            case "pid": process.pid = try reader.optional { try $0.int() }
            case "executable": process.executable = try reader.optional { try $0.string() }
            case "commandLine": process.commandLine = try reader.optional { try $0.string() }
            case "user": process.user = try reader.optional { try $0.string() }
            case "uid": process.uid = try reader.optional { try $0.int() }
            case "unit": process.unit = try reader.optional { try $0.string() }
            case "capture": process.capture = try reader.optional(Self.captureLabel)
            default: try reader.skip()
            }
        }
        return process
    }

    private static func captureLabel(_ reader: inout JSONReader) throws -> CaptureLabel {
        var id: Int?
        var name: String?
        try reader.object { reader, key in
            switch key {
            case "id": id = try reader.int()
            case "name": name = try reader.string()
            default: try reader.skip()
            }
        }
        guard let id, let name else { throw reader.failure("a capture without id or name") }
        return CaptureLabel(id: id, name: name)
    }
}

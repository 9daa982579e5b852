import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyCLI

/// The fast writer (`TaskRecord.writeJSON`) against `Codable` with the API's encoder, and
/// afproxyctl's readers against the writer, on a record whose every field, nested ones included,
/// holds a value: a field the writer forgets, misspells or writes in another form changes the
/// bytes, and one the CLI does not read back makes its record differ. A field added to
/// `TaskRecord` and not set here fails the first check, so the record cannot fall behind the type.
/// Here, in the CLI's tests, because only here are the writer and the reader both in reach: the
/// record is declared once for both sides.
@Suite struct TaskRecordEveryFieldTests {
    static let everyField: TaskRecord = {
        let at = Date(timeIntervalSince1970: 1_795_000_000.5)
        var record = TaskRecord(
            id: 9, kind: .download, state: .suspended, method: "GET", url: "https://h.test/a b?q=\"1\"&p=/x",
            client: "uid 1000", createdAt: at, status: 206, error: "disk full \"quoted\" \\ é", errorCode: "disk-full",
            upload: TransferProgress(completed: 3, total: 4),
            download: TransferProgress(completed: 1 << 40, total: 1 << 41),
            metrics: TaskMetrics(
                dnsMs: 0.03, connectMs: 1.5, tlsMs: 2.25, ttfbMs: 5, totalMs: 123.456789, reusedConnection: false,
                remoteAddress: "[::1]:443", httpVersion: "2"),
            requestHeaders: [.init("Host", "h.test"), .init("X-Odd", "a\"b\\c/d\u{1}")],
            responseHeaders: [.init("Content-Range", "bytes 0-1/2")], endReason: "client closed",
            waiting: "retrying in 4 s (attempt 2 of 10: \"cut\")",
            resumes: [TaskResume(offset: 8 << 20, at: at)], heldBy: 3)
        record.file = DownloadFile(
            path: "/home/a b/f.iso", sha256: "ab", keepPartial: true, attempt: 2, maxAttempts: 10, lastError: "cut",
            restarts: [.init(at: at, reason: "changed\n")], insecure: true, pins: ["sha256//AAAA"])
        record.proxyUser = "alice"
        record.parent = 4
        record.requests = 12
        record.relay = .splice
        record.bodies = RecordedBodies(
            request: RecordedBody(rule: 1, size: 10, seen: 10, cut: false, cutBy: "limit"),
            response: RecordedBody(rule: 1, size: 1024, seen: 4096, cut: true, cutBy: "limit"))
        record.replayOf = 2
        record.clientHTTPVersion = "2"
        record.edits = [TaskEdit(.request, "set header X-A: \"1\""), TaskEdit(.response, "answered by afproxy: 503")]
        record.limit = TaskLimit(
            down: .init(bytesPerSecond: 1_000_000, rule: "global"), up: .init(bytesPerSecond: 5, rule: "task 9"))
        record.clientProcess = ClientProcess(
            pid: 1234, executable: "/usr/bin/curl", commandLine: "curl -x \"p\" http://h/", user: "alice", uid: 1000,
            unit: "session-2.scope", capture: CaptureLabel(id: 2, name: "tests"))
        return record
    }()

    /// The paths of the fields in `value` that hold nil or an empty array.
    static func unset(in value: Any, at path: String) -> [String] {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct else { return [] }
        return mirror.children.flatMap { child -> [String] in
            let name = "\(path).\(child.label ?? "?")"
            let inner = Mirror(reflecting: child.value)
            switch inner.displayStyle {
            case .optional:
                guard let some = inner.children.first else { return [name] }
                let unwrapped = Mirror(reflecting: some.value)
                if unwrapped.displayStyle == .collection {
                    guard let first = unwrapped.children.first else { return [name] }
                    return Self.unset(in: first.value, at: name)
                }
                return Self.unset(in: some.value, at: name)
            case .collection:
                guard let first = inner.children.first else { return [name] }
                return Self.unset(in: first.value, at: name)
            default:
                return Self.unset(in: child.value, at: name)
            }
        }
    }

    @Test func theRecordSetsEveryField() {
        #expect(Self.unset(in: Self.everyField, at: "record") == [])
    }

    @Test func theWriterWritesWhatTheEncoderWrites() throws {
        for list in [TaskList(tasks: [Self.everyField]), TaskList(tasks: [Self.everyField, Self.everyField])] {
            var written: [UInt8] = []
            list.writeJSON(to: &written)
            let encoded = try JSONEncoder.api().encode(list)
            #expect(String(decoding: written, as: UTF8.self) == String(decoding: encoded, as: UTF8.self))
        }
    }

    /// The record as it travels: the API writes times to the second (ISO 8601, as the encoder
    /// does), and the record's times have a fraction so that the writer is seen to cut it.
    static let asSent: TaskRecord = {
        func second(_ date: Date) -> Date { Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)) }
        var record = Self.everyField
        record.createdAt = second(record.createdAt)
        for index in record.resumes.indices { record.resumes[index].at = second(record.resumes[index].at) }
        if var file = record.file {
            for index in file.restarts.indices { file.restarts[index].at = second(file.restarts[index].at) }
            record.file = file
        }
        return record
    }()

    /// What `show`, `download --wait` and `list --json` decode, with the decoder they use, is the
    /// record the daemon wrote, one alone (`GET /v1/tasks/{id}`) or in a list (`GET /v1/tasks`).
    @Test func theCLIReadsBackWhatTheWriterWrites() throws {
        var one: [UInt8] = []
        Self.everyField.writeJSON(to: &one)
        #expect(try Console.decoder().decode(TaskRecord.self, from: Data(one)) == Self.asSent)

        var written: [UInt8] = []
        TaskList(tasks: [Self.everyField, Self.everyField]).writeJSON(to: &written)
        #expect(
            try Console.decoder().decode(TaskList.self, from: Data(written))
                == TaskList(tasks: [Self.asSent, Self.asSent]))
    }

    /// `list`'s own reader (`TaskRow+JSON`) takes from the writer's bytes what the table shows,
    /// as the row of the whole record has it.
    @Test func theTableReadsItsRowFromWhatTheWriterWrites() throws {
        var written: [UInt8] = []
        TaskList(tasks: [Self.everyField]).writeJSON(to: &written)
        #expect(try TaskRow.list(fromJSON: written) == [TaskRow(Self.asSent)])
    }

    /// The check above reads nested fields too: an unset one deep inside is named.
    @Test func anUnsetNestedFieldIsNamed() {
        var record = Self.everyField
        record.file?.pins = nil
        record.metrics.tlsMs = nil
        #expect(Self.unset(in: record, at: "record") == ["record.metrics.tlsMs", "record.file.pins"])
    }
}

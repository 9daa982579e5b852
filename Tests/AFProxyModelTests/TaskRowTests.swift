import AFProxyModel
import FoundationEssentials
import Testing

/// A row is read from the JSON the daemon writes (`TaskList.writeJSON`), and must say what the
/// whole record decoded from the same bytes says.
@Suite struct TaskRowTests {
    private let created = Date(timeIntervalSince1970: 1_795_000_000)

    private func written(_ records: [TaskRecord]) -> Data {
        var out: [UInt8] = []
        TaskList(tasks: records).writeJSON(to: &out)
        return Data(out)
    }

    private func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Every field the table shows set, in records of each kind and state, beside a bare one.
    private var records: [TaskRecord] {
        var full = TaskRecord(
            id: 42, kind: .upload, state: .suspended, method: "POST", url: "http://h:8/p?q=\"1\"&a=/b",
            client: "127.0.0.1:5", createdAt: self.created, status: 201,
            error: "tab\there, quote \" backslash \\ newline\n é ✓", errorCode: "upstream-bad-response",
            upload: TransferProgress(completed: 5, total: nil),
            download: TransferProgress(completed: 1 << 40, total: 1 << 41),
            metrics: TaskMetrics(dnsMs: 0.03, connectMs: 1.5, ttfbMs: 5, totalMs: 123.4, httpVersion: "1.1"),
            requestHeaders: [.init("Host", "h"), .init("X-Odd", "a\"b\\c/d")],
            responseHeaders: [.init("Content-Length", "9")], endReason: "client closed",
            resumes: [TaskResume(offset: 8 << 20, at: self.created)], proxyUser: "alice")
        full.limit = TaskLimit(
            down: .init(bytesPerSecond: 1_000_000, rule: "global"), up: .init(bytesPerSecond: 5, rule: "task 42"))
        full.heldBy = 3
        full.clientProcess = ClientProcess(
            pid: 1234, executable: "/usr/bin/curl", commandLine: "curl -x p http://h/", user: "alice", uid: 1000,
            unit: "session-2.scope")
        var insecure = TaskRecord(
            id: 7, kind: .download, state: .running, method: "GET", url: "https://x/f.iso", client: "afproxyctl",
            createdAt: self.created.addingTimeInterval(5), waiting: "retrying in 4 s (attempt 2 of 10: \"x\")")
        insecure.file = DownloadFile(
            path: "/home/a b/f.iso", sha256: "ab", keepPartial: true, attempt: 2, maxAttempts: 10, lastError: "cut",
            restarts: [.init(at: self.created, reason: "changed")], insecure: true, pins: ["sha256//x"])
        var verified = insecure
        verified.id = 8
        verified.file?.insecure = false
        var userOnly = TaskRecord(
            id: 1, kind: .stream, state: .completed, method: "CONNECT", url: "h:443", client: "c",
            createdAt: Date(timeIntervalSince1970: 0))
        userOnly.clientProcess = ClientProcess(user: "bob", uid: 1001)
        let canceling = TaskRecord(
            id: 2, kind: .data, state: .canceling, method: "GET", url: "http://x/", client: "c",
            createdAt: Date(timeIntervalSince1970: 1))
        return [full, insecure, verified, userOnly, canceling]
    }

    @Test func decodesWhatTheDaemonWritesAsTheRecordSaysIt() throws {
        let records = self.records
        let json = self.written(records)
        let rows = try self.decoder().decode(TaskRow.List.self, from: json).tasks
        // The record read back from the same bytes: the daemon writes dates to the second.
        let decoded = try self.decoder().decode(TaskList.self, from: json).tasks
        #expect(rows == decoded.map(TaskRow.init))
        #expect(rows.map(\.id) == [42, 7, 8, 1, 2])
        #expect(rows.map(\.insecure) == [false, true, false, false, false])
        #expect(rows[0].limit == records[0].limit)
        #expect(rows[0].clientProcess == records[0].clientProcess)
        #expect(rows[0].heldBy == 3)
        #expect(rows[0].error == records[0].error)
        #expect(rows[0].download == TransferProgress(completed: 1 << 40, total: 1 << 41))
        #expect(rows[1].waiting == records[1].waiting)
        #expect(rows[1].createdAt == self.created.addingTimeInterval(5))
        #expect(rows[3].clientProcess?.label == "bob")
        #expect(rows[4].state == .canceling)
    }

    @Test func anEmptyListHasNoRows() throws {
        #expect(try self.decoder().decode(TaskRow.List.self, from: self.written([])).tasks.isEmpty)
    }

    /// What a row needs must be there: a list that is not the daemon's is an error, not rows of
    /// defaults.
    @Test func aRecordWithoutARowsFieldIsAnError() throws {
        var out: [UInt8] = []
        self.records[1].writeJSON(to: &out)
        let whole = String(decoding: out, as: UTF8.self)
        let noState = whole.replacing(#""state":"running","#, with: "")
        #expect(noState != whole)
        #expect(throws: DecodingError.self) {
            try self.decoder().decode(TaskRow.List.self, from: Data(#"{"tasks":[\#(noState)]}"#.utf8))
        }
        let badKind = whole.replacing(#""kind":"download""#, with: #""kind":"teleport""#)
        #expect(throws: DecodingError.self) {
            try self.decoder().decode(TaskRow.List.self, from: Data(#"{"tasks":[\#(badKind)]}"#.utf8))
        }
    }
}

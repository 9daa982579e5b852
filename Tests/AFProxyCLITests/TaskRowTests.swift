import AFProxyAPI
import AFProxyCLI
import AFProxyModel
import FoundationEssentials
import Testing

/// A row is read from the JSON the daemon writes (`TaskList.writeJSON`), and must say what the
/// whole record `JSONDecoder` decodes from the same bytes says.
@Suite struct TaskRowTests {
    private let created = Date(timeIntervalSince1970: 1_795_000_000)

    private func written(_ records: [TaskRecord]) -> [UInt8] {
        var out: [UInt8] = []
        TaskList(tasks: records).writeJSON(to: &out)
        return out
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
        let rows = try TaskRow.list(fromJSON: json)
        // The record read back from the same bytes: the daemon writes dates to the second.
        let decoded = try self.decoder().decode(TaskList.self, from: Data(json)).tasks
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
        #expect(try TaskRow.list(fromJSON: self.written([])).isEmpty)
    }

    /// What a row needs must be there: a list that is not the daemon's is an error, not rows of
    /// defaults.
    @Test func aRecordWithoutARowsFieldIsAnError() throws {
        var out: [UInt8] = []
        self.records[1].writeJSON(to: &out)
        let whole = String(decoding: out, as: UTF8.self)
        for (field, bad) in [
            (#""state":"running","#, ""), (#""kind":"download""#, #""kind":"teleport""#),
            (#""id":7"#, #""id":"7""#), (#""createdAt":"2026-11-18T11:06:45Z""#, #""createdAt":"yesterday""#),
            (#""download":{"completed":0,"total":null}"#, #""download":{"completed":1.5,"total":null}"#),
            (#""download":{"completed":0,"total":null}"#, #""download":{"total":null}"#),
        ] {
            let changed = whole.replacing(field, with: bad)
            #expect(changed != whole, "\(field) is not in \(whole)")
            #expect(throws: JSONReader.Failure.self, "\(bad)") {
                try TaskRow.list(fromJSON: Array(#"{"tasks":[\#(changed)]}"#.utf8))
            }
        }
        for text in [#"{"tasks":[\#(whole)]"#, #"{"tasks":[\#(whole)]}x"#, #"{"task":[]}"#, "", "[]"] {
            #expect(throws: JSONReader.Failure.self, "\(text)") { try TaskRow.list(fromJSON: Array(text.utf8)) }
        }
    }

    /// Keys a row does not know, now or added later, are passed over whatever their values.
    @Test func otherKeysArePassedOver() throws {
        let json = #"""
            {"before": [1, {"a": [true, false, null]}, "x\"]"], "tasks": [ {"future": {"deep": [[[]]], "n": -1.5e3},
             "id": 3, "kind": "data", "state": "running", "method": "GET", "url": "http://h/\u00e9\ud83d\ude00",
             "createdAt": "2026-11-18T11:06:45Z", "upload": {"completed": 0, "total": 0},
             "download": {"completed": 9, "total": null, "extra": "x"}, "file": null, "limit": null} ],
             "after": {}}
            """#
        let rows = try TaskRow.list(fromJSON: Array(json.utf8))
        #expect(rows.count == 1)
        #expect(rows.first?.url == "http://h/é😀")
        #expect(rows.first?.download == TransferProgress(completed: 9, total: nil))
        #expect(rows.first?.status == nil)
        #expect(rows.first?.createdAt == Date(timeIntervalSince1970: 1_795_000_005))
    }
}

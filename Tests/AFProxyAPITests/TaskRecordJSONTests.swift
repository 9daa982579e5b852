import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct TaskRecordJSONTests {
    private func encoded(_ list: TaskList) throws -> String {
        let encoder = JSONEncoder.api()
        return String(decoding: try encoder.encode(list), as: UTF8.self)
    }

    private func written(_ list: TaskList) -> String {
        var out: [UInt8] = []
        list.writeJSON(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func writesWhatTheEncoderWrites() throws {
        var full = TaskRecord(
            id: 42, kind: .upload, state: .suspended, method: "POST", url: "http://h:8/p?q=\"1\"&a=/b",
            client: "127.0.0.1:5", createdAt: Date(timeIntervalSince1970: 1_795_000_000.75), status: 201,
            error: "tab\there, quote \" backslash \\ newline\n bell \u{7} nul \u{0} é ✓",
            errorCode: "upstream-bad-response",
            upload: TransferProgress(completed: 5, total: nil),
            download: TransferProgress(completed: 1 << 40, total: 1 << 41),
            metrics: TaskMetrics(
                dnsMs: 0.03, connectMs: 1.5, tlsMs: nil, ttfbMs: 5, totalMs: 123.456789, reusedConnection: true,
                remoteAddress: "[::1]:80", httpVersion: "1.1"),
            requestHeaders: [.init("Host", "h"), .init("X-Odd", "a\"b\\c/d")],
            responseHeaders: [], endReason: "client closed")
        let bare = TaskRecord(
            id: 1, kind: .data, state: .running, method: "GET", url: "http://x/", client: "c",
            createdAt: Date(timeIntervalSince1970: 0))
        var download = TaskRecord(
            id: 7, kind: .download, state: .running, method: "GET", url: "https://x/f.iso", client: "afproxyctl",
            createdAt: Date(timeIntervalSince1970: 1_795_000_000), waiting: "retrying in 4 s (attempt 2 of 10: \"x\")",
            resumes: [TaskResume(offset: 8 << 20, at: Date(timeIntervalSince1970: 1_795_000_001))])
        download.file = DownloadFile(
            path: "/home/a b/f.iso", sha256: "ab", keepPartial: true, attempt: 2, maxAttempts: 10, lastError: "cut",
            restarts: [.init(at: Date(timeIntervalSince1970: 1_795_000_002), reason: "changed")])
        for list in [
            TaskList(tasks: []), TaskList(tasks: [bare]), TaskList(tasks: [full, bare]), TaskList(tasks: [download]),
        ] {
            #expect(self.written(list) == (try self.encoded(list)))
        }
        full.clientProcess = ClientProcess(
            pid: 1234, executable: "/usr/bin/curl", commandLine: "curl -x \"p\" http://h/", user: "alice", uid: 1000,
            unit: "session-2.scope")
        var userOnly = bare
        userOnly.clientProcess = ClientProcess(user: "bob", uid: 1001)
        #expect(
            self.written(TaskList(tasks: [full, userOnly])) == (try self.encoded(TaskList(tasks: [full, userOnly]))))
        #expect(
            self.written(TaskList(tasks: [userOnly])).contains(#""clientProcess":{"capture":null,"commandLine":null,"#))
        full.metrics.totalMs = 1e-7
        full.metrics.dnsMs = 12345678.0
        #expect(self.written(TaskList(tasks: [full])) == (try self.encoded(TaskList(tasks: [full]))))
    }
}

import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyCLI

/// The `show` view, whole: every field, and the timeline scaled to the longest phase.
@Suite struct TaskDetailTests {
    @Test func aCompletedTaskWithItsMetricsAndBothHeaderLists() {
        let record = TaskRecord(
            id: 42, kind: .data, state: .completed, method: "GET", url: "https://example.test/file",
            client: "127.0.0.1:50000",
            createdAt: Date(timeIntervalSince1970: 0), status: 200,
            upload: .init(completed: 0, total: 0), download: .init(completed: 1536, total: 2048),
            metrics: TaskMetrics(
                dnsMs: 1, connectMs: 3, tlsMs: 15, ttfbMs: 20, totalMs: 60, reusedConnection: false,
                remoteAddress: "192.0.2.1:443", httpVersion: "1.1"),
            requestHeaders: [HTTPHeaderField("Host", "example.test"), HTTPHeaderField("Accept", "*/*")],
            responseHeaders: [HTTPHeaderField("Content-Length", "2048")])
        let expected = [
            "task 42  data  completed",
            "  GET https://example.test/file",
            "  client     127.0.0.1:50000",
            "  created    1970-01-01T00:00:00Z",
            "  status     200",
            "  error      -",
            "  upload     0 B of 0 B (100%)",
            "  download   1.5 KiB of 2.0 KiB (75%)",
            "  remote     192.0.2.1:443  HTTP/1.1  new connection",
            "  timeline",
            "    dns       1.00 ms     =",
            "    connect   3.00 ms     =",
            "    tls       15.00 ms    =======",
            "    first byte 20.00 ms    ==========",
            "    total     60.00 ms    ==============================",
            "  request headers",
            "    Host: example.test",
            "    Accept: */*",
            "  response headers",
            "    Content-Length: 2048",
        ]
        #expect(TaskDetail(task: record, terminal: false).render() == expected.joined(separator: "\n"))
    }

    /// A tunnel that ended, never answered: no response headers, no timings, its end reason.
    @Test func aTaskWithNothingKnownShowsDashes() {
        let record = TaskRecord(
            id: 5, kind: .stream, state: .completed, method: "CONNECT", url: "example.test:443", client: "c",
            createdAt: Date(timeIntervalSince1970: 86_400), error: "connect failed",
            download: .init(completed: 0, total: nil), endReason: "upstream unreachable")
        let expected = [
            "task 5  stream  \u{1B}[2mcompleted\u{1B}[0m",
            "  CONNECT example.test:443",
            "  client     c",
            "  created    1970-01-02T00:00:00Z",
            "  status     -",
            "  error      connect failed",
            "  ended      upstream unreachable",
            "  upload     0 B (total unknown)",
            "  download   0 B (total unknown)",
            "  remote     -  HTTP/-  ",
            "  timeline",
            "    dns       -           ",
            "    connect   -           ",
            "    tls       -           ",
            "    first byte -           ",
            "    total     -           ",
            "  request headers",
        ]
        #expect(TaskDetail(task: record, terminal: true).render() == expected.joined(separator: "\n"))
    }

    /// A tunnel says which relay carried it, after its end reason; the other kinds have none.
    @Test(arguments: [(TunnelRelayKind.splice, "splice (in the kernel)"), (.nio, "nio")])
    func aTunnelShowsItsRelay(_ relay: TunnelRelayKind, _ shown: String) {
        var record = TaskRecord(
            id: 5, kind: .stream, state: .completed, method: "CONNECT", url: "example.test:443", client: "c",
            createdAt: Date(timeIntervalSince1970: 86_400), endReason: "client closed")
        #expect(!TaskDetail(task: record, terminal: false).render().contains("relay"))
        record.relay = relay
        #expect(
            TaskDetail(task: record, terminal: false).render().contains(
                "  ended      client closed\n  relay      \(shown)\n"))
    }
}

/// What `show` adds for a download: its file, attempts, why it waits, where it resumed and why
/// it started again.
@Suite struct TaskDetailDownloadTests {
    private func record(file: DownloadFile?, waiting: String?, resumes: [TaskResume]) -> TaskRecord {
        TaskRecord(
            id: 12, kind: .download, state: .running, method: "GET", url: "https://example.test/big.iso",
            client: "afproxyctl", createdAt: Date(timeIntervalSince1970: 0),
            download: .init(completed: 12_582_912, total: 25_165_824), waiting: waiting, resumes: resumes,
            file: file)
    }

    @Test func aRetryingDownloadWithResumesAndARestart() {
        let file = DownloadFile(
            path: "/home/u/Downloads/big.iso", sha256: String(repeating: "ab", count: 32), keepPartial: true,
            attempt: 2, maxAttempts: 10, lastError: "Connection reset by peer",
            restarts: [.init(at: Date(timeIntervalSince1970: 5), reason: "the ETag changed")])
        let record = self.record(
            file: file, waiting: "retrying in 4 s (attempt 2 of 10: Connection reset by peer)",
            resumes: [
                TaskResume(offset: 1_048_576, at: Date(timeIntervalSince1970: 10)),
                TaskResume(offset: 12_582_912, at: Date(timeIntervalSince1970: 20)),
            ])
        let lines = TaskDetail(task: record, terminal: false).render().split(separator: "\n").map(String.init)
        let start = lines.firstIndex { $0.hasPrefix("  download ") }!
        let expected = [
            "  download   12.0 MiB of 24.0 MiB (50%)",
            "  waiting    retrying in 4 s (attempt 2 of 10: Connection reset by peer)",
            "  file       /home/u/Downloads/big.iso",
            "  partial    /home/u/Downloads/big.iso.afpart (kept if canceled or failed)",
            "  sha256     " + String(repeating: "ab", count: 32),
            "  attempt    2 of 10",
            "  last error Connection reset by peer",
            "  resumed at offset",
            "    1970-01-01T00:00:10Z  1048576 B (1.0 MiB)",
            "    1970-01-01T00:00:20Z  12582912 B (12.0 MiB)",
            "  started again from 0",
            "    1970-01-01T00:00:05Z  the ETag changed",
            "  remote     -  HTTP/-  ",
        ]
        #expect(Array(lines[start..<(start + expected.count)]) == expected)
        #expect(lines[0] == "task 12  download  running")
    }

    @Test func aQueuedDownloadWithNothingToReportYet() {
        let record = self.record(file: DownloadFile(path: "/tmp/f"), waiting: "queued", resumes: [])
        let lines = TaskDetail(task: record, terminal: false).render().split(separator: "\n").map(String.init)
        let start = lines.firstIndex { $0.hasPrefix("  download ") }!
        #expect(
            Array(lines[(start + 1)...(start + 6)]) == [
                "  waiting    queued",
                "  file       /tmp/f",
                "  partial    /tmp/f.afpart (removed if canceled or failed)",
                "  sha256     - (not checked)",
                "  attempt    0 of 10",
                "  remote     -  HTTP/-  ",
            ])
    }

    /// A proxied GET resumed transparently has resumes but no file.
    @Test func aProxiedGETShowsItsResumesOnly() {
        var record = self.record(
            file: nil, waiting: nil, resumes: [TaskResume(offset: 4096, at: Date(timeIntervalSince1970: 1))])
        record.kind = .data
        #expect(
            TaskDetail.downloadLines(record) == ["  resumed at offset", "    1970-01-01T00:00:01Z  4096 B (4.0 KiB)"])
        record.resumes = []
        #expect(TaskDetail.downloadLines(record).isEmpty)
    }
}

/// `show`'s lines for the client process, under `client`.
@Suite struct TaskDetailProcessTests {
    @Test func everythingKnown() {
        let process = ClientProcess(
            pid: 4321, executable: "/usr/bin/curl", commandLine: "curl -x http://127.0.0.1:3128 http://h/",
            user: "alice", uid: 1000, unit: "session-2.scope")
        #expect(
            TaskDetail.processLines(process) == [
                "  process    curl[4321] /usr/bin/curl",
                "  user       alice (1000)",
                "  unit       session-2.scope",
                "  command    curl -x http://127.0.0.1:3128 http://h/",
            ])
    }

    @Test func onlyTheSocketsOwnerOrNothing() {
        #expect(
            TaskDetail.processLines(ClientProcess(user: "bob", uid: 1001)) == [
                "  process    bob", "  user       bob (1001)",
            ])
        #expect(TaskDetail.processLines(ClientProcess(uid: 1002)) == ["  process    uid 1002", "  user       1002"])
        #expect(TaskDetail.processLines(nil).isEmpty)
        var record = TaskRecord(
            id: 1, kind: .data, state: .running, method: "GET", url: "http://h/", client: "127.0.0.1:5",
            createdAt: Date(timeIntervalSince1970: 0))
        record.clientProcess = ClientProcess(pid: 9, executable: "/bin/x", uid: 0)
        let lines = TaskDetail(task: record, terminal: false).render().split(separator: "\n").map(String.init)
        #expect(Array(lines[2...4]) == ["  client     127.0.0.1:5", "  process    x[9] /bin/x", "  user       0"])
    }
}

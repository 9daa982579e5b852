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
}

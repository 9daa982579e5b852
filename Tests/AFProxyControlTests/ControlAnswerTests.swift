import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import NIOCore
import Testing

@testable import AFProxyControl

/// The task answers the endpoints pick the hand-written writer for are, byte for byte, what the
/// API's `Codable` path makes of the same values.
@Suite struct ControlAnswerTests {
    private func bytes(_ answer: ControlAnswer) -> String? {
        guard case .body(let status, let contentType, let body) = answer, status == .ok,
            contentType == "application/json"
        else { return nil }
        return String(buffer: body)
    }

    @Test func theFastTaskAnswersAreTheCodableOnes() {
        let bare = TaskRecord(
            id: 1, kind: .data, state: .running, method: "GET", url: "http://x/", client: "c",
            createdAt: Date(timeIntervalSince1970: 0))
        for record in [bare, TaskRecordEveryField.record] {
            #expect(self.bytes(.task(.ok, record)) == self.bytes(.json(.ok, record)))
        }
        for list in [TaskList(tasks: []), TaskList(tasks: [bare, TaskRecordEveryField.record])] {
            #expect(self.bytes(.tasks(.ok, list)) == self.bytes(.json(.ok, list)))
        }
        #expect(self.bytes(.error(.ok, "a \"b\"/c"))?.hasSuffix("}\n") == true)
    }
}

/// A record with every field set (nested ones too), as the model's tests build it.
enum TaskRecordEveryField {
    static let record: TaskRecord = {
        let at = Date(timeIntervalSince1970: 1_795_000_000.5)
        var record = TaskRecord(
            id: 9, kind: .download, state: .suspended, method: "GET", url: "https://h.test/a?q=\"1\"&p=/x",
            client: "uid 1000", createdAt: at, status: 206, error: "e \\ é", errorCode: "disk-full",
            upload: TransferProgress(completed: 3, total: 4), download: TransferProgress(completed: 1, total: 2),
            metrics: TaskMetrics(
                dnsMs: 0.03, connectMs: 1.5, tlsMs: 2.25, ttfbMs: 5, totalMs: 123.456789, reusedConnection: false,
                remoteAddress: "[::1]:443", httpVersion: "2"),
            requestHeaders: [.init("Host", "h.test")], responseHeaders: [.init("A", "b/c")], endReason: "closed",
            waiting: "retrying", resumes: [TaskResume(offset: 8, at: at)], heldBy: 3)
        record.file = DownloadFile(
            path: "/a b/f", sha256: "ab", keepPartial: true, attempt: 2, lastError: "cut",
            restarts: [.init(at: at, reason: "changed")], insecure: true, pins: ["sha256//AAAA"])
        record.proxyUser = "alice"
        record.limit = TaskLimit(
            down: .init(bytesPerSecond: 1, rule: "global"), up: .init(bytesPerSecond: 5, rule: "t"))
        record.clientProcess = ClientProcess(
            pid: 1, executable: "/bin/x", commandLine: "x", user: "alice", uid: 1000, unit: "u.scope")
        return record
    }()
}

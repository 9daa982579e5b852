import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyDaemon

/// The journal fields of a task's client process.
@Suite struct TaskLogClientProcessTests {
    @Test func theKnownFieldsOnly() {
        var record = TaskRecord(
            id: 7, kind: .data, state: .completed, method: "GET", url: "http://h/x", client: "127.0.0.1:1",
            createdAt: Date(), status: 200)
        #expect(TaskLog.entry(record, durationMs: 1).2.keys.filter { $0.hasPrefix("client_") }.isEmpty)
        record.clientProcess = ClientProcess(
            pid: 42, executable: "/usr/bin/curl", commandLine: "curl x", user: "alice", uid: 1000, unit: "a.service")
        let metadata = TaskLog.entry(record, durationMs: 1).2
        #expect(metadata["client_pid"] == "42")
        #expect(metadata["client_exe"] == "/usr/bin/curl")
        #expect(metadata["client_unit"] == "a.service")
        #expect(metadata["client_user"] == "alice")
        #expect(metadata["client_uid"] == "1000")
        record.clientProcess = ClientProcess(user: "bob", uid: 1001)
        let userOnly = TaskLog.entry(record, durationMs: 1).2
        #expect(userOnly["client_pid"] == nil && userOnly["client_exe"] == nil && userOnly["client_uid"] == "1001")
    }

    @Test func loopbackClientsAreLookedUpAgain() {
        #expect(TaskLog.isLoopback(client: "127.0.0.1:5"))
        #expect(TaskLog.isLoopback(client: "127.3.0.1:5"))
        #expect(TaskLog.isLoopback(client: "[::1]:5"))
        #expect(TaskLog.isLoopback(client: "[::ffff:127.0.0.1]:5"))
        #expect(!TaskLog.isLoopback(client: "192.168.1.5:5"))
        #expect(!TaskLog.isLoopback(client: "[fe80::1]:5"))
        #expect(!TaskLog.isLoopback(client: "uid 1000"))
    }
}

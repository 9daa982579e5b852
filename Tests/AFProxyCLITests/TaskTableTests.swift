import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyCLI

/// The `list` table, whole: scripts read it piped, so its columns and alignment are pinned to
/// the character.
@Suite struct TaskTableTests {
    private let now = Date(timeIntervalSince1970: 1_000_000)

    private var tasks: [TaskRecord] {
        [
            TaskRecord(
                id: 7, kind: .data, state: .running, method: "GET", url: "http://example.test/a", client: "c",
                createdAt: self.now.addingTimeInterval(-10), status: 200,
                download: .init(completed: 1000, total: 5000)),
            TaskRecord(
                id: 12, kind: .upload, state: .suspended, method: "PUT",
                url: "http://example.test/a/rather/long/path/to/an/upload", client: "c",
                createdAt: self.now.addingTimeInterval(-125), upload: .init(completed: 0, total: nil)),
            TaskRecord(
                id: 3, kind: .data, state: .completed, method: "GET", url: "http://timeout.test/", client: "c",
                createdAt: self.now.addingTimeInterval(-3700), error: "upstream timed out",
                download: .init(completed: 2048, total: nil)),
        ]
    }

    @Test func pipedTheColumnsArePlainAndAligned() {
        let table = TaskTable(tasks: rows(self.tasks), terminal: false, now: self.now, urlWidth: 30)
        let expected = [
            "ID  KIND    STATE      METHOD  URL                             STATUS  PROGRESS  RATE     ETA  AGE",
            "7   data    running    GET     http://example.test/a           200     20%       100 B/s  40s  10s",
            "12  upload  suspended  PUT     http://example.test/a/rather/…  -       0 B       -        -    2m5s",
            "3   data    completed  GET     http://timeout.test/            ERR     2.0 KiB   -        -    1h1m",
        ]
        #expect(table.render() == expected.joined(separator: "\n"))
    }

    /// Colour goes around the padded cell, so that the escapes do not shift the columns after it.
    @Test func onATerminalStatesAreColouredAndProgressIsABar() {
        let table = TaskTable(tasks: rows(Array(self.tasks.prefix(2))), terminal: true, now: self.now, urlWidth: 30)
        let lines = table.render().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 3)
        #expect(
            lines[0]
                == "ID  KIND    STATE      METHOD  URL                             STATUS  PROGRESS             RATE     ETA  AGE"
        )
        #expect(
            lines[1] == "7   data    \u{1B}[32mrunning  \u{1B}[0m  GET     http://example.test/a           200     "
                + "[##..........]  20%  100 B/s  40s  10s")
        #expect(
            lines[2] == "12  upload  \u{1B}[33msuspended\u{1B}[0m  PUT     http://example.test/a/rather/…  -       "
                + "0 B                  -        -    2m5s")
    }

    @Test func withNoTasksOnlyTheHeader() {
        let table = TaskTable(tasks: [], terminal: false, now: self.now)
        #expect(table.render() == "ID  KIND  STATE  METHOD  URL  STATUS  PROGRESS  RATE  ETA  AGE")
    }

    @Test func aURLOfExactlyTheWidthIsKept() {
        let url = "http://h/" + String(repeating: "x", count: 11)  // 20 characters
        let record = TaskRecord(
            id: 1, kind: .data, state: .running, method: "GET", url: url, client: "c", createdAt: self.now)
        let short = TaskTable(tasks: rows([record]), terminal: false, now: self.now, urlWidth: 20).render()
        #expect(short.contains("  \(url)  "))
        let cut = TaskTable(tasks: rows([record]), terminal: false, now: self.now, urlWidth: 19).render()
        #expect(cut.contains("  http://h/xxxxxxxxx…  "))
        #expect(!cut.contains(url))
    }
}

/// Downloads in the table: why one waits is in place of its rate.
@Suite struct TaskTableDownloadTests {
    private let now = Date(timeIntervalSince1970: 1_000_000)

    @Test func aWaitingReasonTakesTheRateColumn() {
        let tasks = [
            TaskRecord(
                id: 20, kind: .download, state: .running, method: "GET", url: "http://example.test/a.iso",
                client: "afproxyctl", createdAt: self.now.addingTimeInterval(-10),
                download: .init(completed: 1000, total: 5000),
                waiting: "retrying in 4 s (attempt 2 of 10: Connection reset by peer)"),
            TaskRecord(
                id: 21, kind: .download, state: .running, method: "GET", url: "http://example.test/b.iso",
                client: "afproxyctl", createdAt: self.now.addingTimeInterval(-5), waiting: "queued"),
            TaskRecord(
                id: 22, kind: .download, state: .running, method: "GET", url: "http://example.test/c.iso",
                client: "afproxyctl", createdAt: self.now.addingTimeInterval(-10), status: 200,
                download: .init(completed: 2000, total: 4000)),
        ]
        let table = TaskTable(tasks: rows(tasks), terminal: false, now: self.now, urlWidth: 30, waitingWidth: 40)
        let expected = [
            "ID  KIND      STATE    METHOD  URL                        STATUS  PROGRESS  RATE                                      ETA  AGE",
            "20  download  running  GET     http://example.test/a.iso  -       20%       retrying in 4 s (attempt 2 of 10: Conne…  -    10s",
            "21  download  running  GET     http://example.test/b.iso  -       0 B       queued                                    -    5s",
            "22  download  running  GET     http://example.test/c.iso  200     50%       200 B/s                                   10s  10s",
        ]
        #expect(table.render() == expected.joined(separator: "\n"))
    }
}

/// The PROCESS column: shown when a task has a client process and the table fits with it.
@Suite struct TaskTableProcessTests {
    private let now = Date(timeIntervalSince1970: 1_000_000)

    private var tasks: [TaskRecord] {
        var curl = TaskRecord(
            id: 7, kind: .data, state: .running, method: "GET", url: "http://example.test/a", client: "c",
            createdAt: self.now.addingTimeInterval(-10), status: 200, download: .init(completed: 1000, total: 5000))
        curl.clientProcess = ClientProcess(pid: 12345, executable: "/usr/bin/curl", uid: 0, unit: "a.service")
        var remote = curl
        remote.id = 8
        remote.clientProcess = nil
        var hidden = curl
        hidden.id = 9
        hidden.clientProcess = ClientProcess(user: "alice", uid: 1000)
        return [curl, remote, hidden]
    }

    @Test func onAWideTerminalItIsTheLastColumn() {
        let expected = [
            "ID  KIND  STATE    METHOD  URL                    STATUS  PROGRESS  RATE     ETA  AGE  PROCESS",
            "7   data  running  GET     http://example.test/a  200     20%       100 B/s  40s  10s  curl[12345]",
            "8   data  running  GET     http://example.test/a  200     20%       100 B/s  40s  10s  -",
            "9   data  running  GET     http://example.test/a  200     20%       100 B/s  40s  10s  alice",
        ]
        let wide = TaskTable(tasks: rows(self.tasks), terminal: false, now: self.now, width: 200).render()
        #expect(wide == expected.joined(separator: "\n"))
        // Piped, the columns stay those scripts read.
        let piped = TaskTable(tasks: rows(self.tasks), terminal: false, now: self.now).render()
        #expect(piped.split(separator: "\n")[0].hasSuffix("AGE"))
    }

    @Test func onANarrowTerminalItIsLeftOut() {
        let needed = TaskTable(tasks: rows(self.tasks), terminal: false, now: self.now, width: 200).render()
            .split(separator: "\n").map(\.count).max()!
        let wide = TaskTable(tasks: rows(self.tasks), terminal: false, now: self.now, width: needed).render()
        #expect(wide.split(separator: "\n")[0].hasSuffix("PROCESS"))
        let narrow = TaskTable(tasks: rows(self.tasks), terminal: false, now: self.now, width: needed - 1).render()
        #expect(narrow.split(separator: "\n")[0].hasSuffix("AGE"))
    }

    @Test func withNoProcessKnownThereIsNoColumn() {
        let table = TaskTable(tasks: rows([self.tasks[1]]), terminal: false, now: self.now, width: 200).render()
        #expect(table.split(separator: "\n")[0].hasSuffix("AGE"))
    }

    @Test func theFiltersMatchTheExecutablesNameAndTheUnit() {
        let tasks = self.tasks
        #expect(tasks.filter(ProcessFilter(process: "curl").matches).map(\.id) == [7])
        #expect(tasks.filter(ProcessFilter(process: "cur").matches).isEmpty)
        #expect(tasks.filter(ProcessFilter(unit: "a.service").matches).map(\.id) == [7])
        #expect(tasks.filter(ProcessFilter(process: "curl", unit: "b.service").matches).isEmpty)
        #expect(tasks.filter(ProcessFilter().matches).count == 3)
    }
}

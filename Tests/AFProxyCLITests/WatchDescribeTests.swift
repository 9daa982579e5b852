import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyCLI

/// `watch`'s plain lines for the events a download adds.
@Suite struct WatchDescribeTests {
    private let now = Date(timeIntervalSince1970: 0)

    private var task: TaskRecord {
        TaskRecord(
            id: 12, kind: .download, state: .running, method: "GET", url: "http://h/f", client: "afproxyctl",
            createdAt: self.now, download: .init(completed: 3 << 20, total: 6 << 20),
            resumes: [
                TaskResume(offset: 1024, at: self.now), TaskResume(offset: 3 << 20, at: self.now),
            ], file: DownloadFile(path: "/tmp/f"))
    }

    @Test func aResumeAtOffsetSaysTheOffset() {
        #expect(
            Watch.describe(TaskEvent(.resumedAtOffset, task: self.task), now: self.now)
                == "1970-01-01T00:00:00Z resumed-at-offset #12 download GET http://h/f at 3145728 B (3.0 MiB)")
    }

    @Test func progressSaysWhyADownloadWaits() {
        var task = self.task
        task.waiting = "retrying in 2 s (attempt 1 of 10: timeout)"
        #expect(
            Watch.describe(TaskEvent(.progress, task: task), now: self.now)
                == "1970-01-01T00:00:00Z progress #12 download GET http://h/f 50% (retrying in 2 s (attempt 1 of 10: timeout))"
        )
    }

    @Test func aCompletedDownloadNamesItsFile() {
        var task = self.task
        task.state = .completed
        task.status = 200
        #expect(
            Watch.describe(TaskEvent(.completed, task: task), now: self.now)
                == "1970-01-01T00:00:00Z completed #12 download GET http://h/f 200 down 3.0 MiB up 0 B file: /tmp/f")
        task.error = "canceled"
        #expect(!Watch.describe(TaskEvent(.completed, task: task), now: self.now).contains("file:"))
    }
}

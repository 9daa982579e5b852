import AFProxyAPI
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

    @Test func aMissedLineSaysHowMany() {
        #expect(
            Watch.describe(MissedEvents(3), now: self.now)
                == "1970-01-01T00:00:00Z missed    3 events while not reading")
        #expect(Watch.describe(MissedEvents(1), now: self.now).hasSuffix(" 1 event while not reading"))
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

/// `watch` and `status` say where the network is.
@Suite struct NetworkTextTests {
    private let now = Date(timeIntervalSince1970: 0)
    private let since = Date(timeIntervalSince1970: 60)

    @Test func aNetworkEventSaysWhatHappenedAndWhere() {
        let restored = NetworkEvent(
            .networkRestored,
            network: Reachability(
                status: .reachable, interface: "eth0", interfaceKind: "ethernet", changedAt: self.since))
        #expect(
            Watch.describe(restored, now: self.now)
                == "1970-01-01T00:00:00Z network-restored network reachable via eth0 (ethernet) since 1970-01-01T00:01:00Z"
        )
        let lost = NetworkEvent(.networkLost, network: Reachability(status: .unreachable, changedAt: self.since))
        #expect(
            Watch.describe(lost, now: self.now)
                == "1970-01-01T00:00:00Z network-lost network unreachable since 1970-01-01T00:01:00Z")
    }

    @Test func statusShowsVersionUptimeNetworkAndCounts() {
        var tasks = SessionStats()
        tasks.live = 3
        tasks.byState = ["running": 2, "suspended": 1]
        tasks.served = 40
        tasks.failed = 1
        tasks.canceled = 2
        let status = DaemonStatus(
            version: "0.1.0", uptimeSeconds: 3725,
            network: Reachability(status: .reachable, interface: "wlan0", interfaceKind: "wifi", changedAt: self.since),
            tasks: tasks)
        let lines = Status.render(status).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("afproxy 0.1.0, up "))
        #expect(lines[1] == "network   reachable via wlan0 (wifi) since 1970-01-01T00:01:00Z")
        #expect(lines[2] == "tasks     3 live (running 2, suspended 1), 40 served (1 failed, 2 canceled)")
        #expect(
            Status.render(DaemonStatus(uptimeSeconds: 1, network: .unknown, tasks: SessionStats()))
                .contains("network   unknown (the daemon has no answer from the kernel)"))
    }

    @Test func statusListsTheCapturesRunning() {
        let captures = [
            CaptureSummary(
                id: 3, name: "tests", pid: 4242, commandLine: "pytest -x", intercept: false, startedAt: self.since),
            CaptureSummary(
                id: 5, name: "node", pid: 77, commandLine: "node app.js", intercept: true, startedAt: self.since),
        ]
        let lines = Status.render(
            DaemonStatus(uptimeSeconds: 1, network: .unknown, tasks: SessionStats(), captures: captures)
        ).split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines[3] == "captures  #3 tests, pid 4242: pytest -x")
        #expect(lines[4] == "          #5 node, pid 77 (intercepted): node app.js")
    }

    @Test func statusShowsAStateFileThatDoesNotHoldWhatIsInForce() {
        var tasks = SessionStats()
        tasks.stateFiles = ["throttle.json": "write failed: cannot rename x: Is a directory", "holds.json": "y"]
        let lines = Status.render(DaemonStatus(uptimeSeconds: 1, network: .unknown, tasks: tasks))
            .split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines[3] == "state files holds.json y")
        #expect(lines[4] == "            throttle.json write failed: cannot rename x: Is a directory")
    }

    @Test func statusShowsTheUpstreamProxyAndWhyItIsUnreachable() {
        var tasks = SessionStats()
        tasks.upstreamProxy = UpstreamProxyStatus(proxy: "http://proxy.example:3128", reachable: true)
        var lines = Status.render(DaemonStatus(uptimeSeconds: 1, network: .unknown, tasks: tasks))
            .split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[3] == "upstream  http://proxy.example:3128")
        tasks.upstreamProxy = UpstreamProxyStatus(
            proxy: "http://proxy.example:3128", reachable: false,
            error: "upstream proxy http://proxy.example:3128 unreachable: Connection refused")
        lines = Status.render(DaemonStatus(uptimeSeconds: 1, network: .unknown, tasks: tasks))
            .split(separator: "\n").map(String.init)
        #expect(
            lines[3]
                == "upstream  unreachable: upstream proxy http://proxy.example:3128 unreachable: Connection refused")
    }
}

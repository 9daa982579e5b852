import AFProxySystemd
import Logging
import Testing

@Suite struct NotifyMessageTests {
    @Test func messagesAreNewlineSeparatedAssignments() {
        #expect(NotifyMessage.ready(status: nil) == "READY=1")
        #expect(NotifyMessage.ready(status: "2 running") == "READY=1\nSTATUS=2 running")
        #expect(NotifyMessage.reloading(monotonicMicroseconds: 1234, status: nil) == "RELOADING=1\nMONOTONIC_USEC=1234")
        #expect(NotifyMessage.stopping(status: "bye") == "STOPPING=1\nSTATUS=bye")
        #expect(NotifyMessage.watchdog == "WATCHDOG=1")
    }

    @Test func statusNeverSpansLines() {
        #expect(NotifyMessage.status("a\nb\r\nc") == "STATUS=a b c")
    }

    @Test func withoutNotifySocketNothingIsSent() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(!notifier.send("READY=1"))
    }

    @Test func monotonicClockMoves() {
        let first = SystemdNotifier.monotonicMicroseconds()
        #expect(first > 0)
        #expect(SystemdNotifier.monotonicMicroseconds() >= first)
    }
}

@Suite struct ListenFDsTests {
    typealias D = ListenFDs.Descriptor

    @Test func namedDescriptorsTakeTheirRoles() throws {
        let fds = try ListenFDs.assign([D(fd: 3, name: "proxy"), D(fd: 4, name: "proxy"), D(fd: 5, name: "control")]) {
            _ in .inet
        }
        #expect(fds.proxy == [3, 4])
        #expect(fds.control == 5)
        #expect(fds.notes.isEmpty)
    }

    @Test func aSingleUnnamedDescriptorIsTheProxyPort() throws {
        let unix = try ListenFDs.assign([D(fd: 3, name: "unknown")]) { _ in .unix }
        #expect(unix.proxy == [3])
        #expect(unix.control == nil)
        let named = try ListenFDs.assign([D(fd: 3, name: "afproxy.socket")]) { _ in .inet }
        #expect(named.proxy == [3])
        #expect(named.notes.count == 1)
    }

    @Test func severalUnnamedDescriptorsGoByFamily() throws {
        let fds = try ListenFDs.assign([D(fd: 3, name: "afproxy.socket"), D(fd: 4, name: "afproxy.socket")]) { fd in
            fd == 4 ? .unix : .inet
        }
        #expect(fds.proxy == [3])
        #expect(fds.control == 4)
    }

    @Test func onlyControlLeavesTheProxyToBind() throws {
        let fds = try ListenFDs.assign([D(fd: 3, name: "control")]) { _ in .unix }
        #expect(fds.proxy.isEmpty)
        #expect(fds.control == 3)
        #expect(!fds.isEmpty)
        #expect(ListenFDs().isEmpty)
    }

    @Test func refusesWhatCannotBeServed() {
        #expect(throws: ListenFDs.Failure.self) {
            try ListenFDs.assign([D(fd: 3, name: "proxy")]) { _ in .unusable }
        }
        #expect(throws: ListenFDs.Failure.self) {
            try ListenFDs.assign([D(fd: 3, name: "control"), D(fd: 4, name: "control")]) { _ in .unix }
        }
    }

    @Test func nothingPassedIsEmpty() throws {
        // This test process was not socket-activated.
        #expect(try ListenFDs.take().isEmpty)
    }
}

@Suite struct JournalEntryTests {
    @Test func metadataKeysBecomePrefixedFieldNames() {
        #expect(JournalEntry.fieldName(forMetadataKey: "task_id") == "AFPROXY_TASK_ID")
        #expect(JournalEntry.fieldName(forMetadataKey: "bytes-down") == "AFPROXY_BYTES_DOWN")
        #expect(JournalEntry.fieldName(forMetadataKey: "AFPROXY_URL") == "AFPROXY_URL")
        #expect(JournalEntry.fieldName(forMetadataKey: "") == nil)
        #expect(JournalEntry.fieldName(forMetadataKey: String(repeating: "x", count: 100))!.count == 64)
    }

    @Test func priorities() {
        #expect(JournalEntry.priority(.info) == 6)
        #expect(JournalEntry.priority(.error) == 3)
        #expect(JournalEntry.priority(.debug) == 7)
        #expect(JournalEntry.priority(.critical) == 2)
    }

    @Test func anEntryCarriesMessagePriorityAndMetadata() {
        let fields = JournalEntry.fields(
            level: .error, message: "GET http://x/ failed",
            metadata: ["status": "502", "task_id": .stringConvertible(7)],
            identifier: "afproxy", file: "F.swift", function: "f()", line: 3)
        let byName = Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(byName["MESSAGE"] == "GET http://x/ failed")
        #expect(byName["PRIORITY"] == "3")
        #expect(byName["SYSLOG_IDENTIFIER"] == "afproxy")
        #expect(byName["AFPROXY_STATUS"] == "502")
        #expect(byName["AFPROXY_TASK_ID"] == "7")
        #expect(byName["CODE_LINE"] == "3")
    }
}

@Suite struct WatchdogPolicyTests {
    let start = ContinuousClock.now

    @Test func pingsEveryHalfIntervalWhileTheCounterMoves() {
        var policy = WatchdogPolicy(interval: .seconds(4))
        var pings: [Int] = []
        for tenth in 0...60 {  // six seconds, sampled every 100 ms, the counter moving each second
            if policy.observe(progress: UInt64(tenth / 10), at: self.start + .milliseconds(tenth * 100)) {
                pings.append(tenth)
            }
        }
        #expect(pings == [0, 20, 40, 60])
    }

    @Test func stopsPingingWhenTheCounterStalls() {
        var policy = WatchdogPolicy(interval: .seconds(2))
        let samples: [(progress: UInt64, at: Duration)] = [
            (1, .zero), (2, .seconds(1)), (2, .seconds(2)), (2, .milliseconds(3500)), (2, .seconds(10)),
            (3, .seconds(11)),
        ]
        let pings = samples.map { policy.observe(progress: $0.progress, at: self.start + $0.at) }
        #expect(pings == [true, true, true, false, false, true])
    }

    @Test func samplesOftenEnough() {
        #expect(WatchdogPolicy(interval: .seconds(30)).samplingPeriod == .milliseconds(250))
        #expect(WatchdogPolicy(interval: .milliseconds(400)).samplingPeriod == .milliseconds(100))
    }
}

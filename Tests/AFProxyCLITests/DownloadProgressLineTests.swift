import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyCLI

/// `download --wait`'s line, at the widths a terminal may have, and piped.
@Suite struct DownloadProgressLineTests {
    private let mebibyte: Int64 = 1 << 20

    private func line(
        _ completed: Int64, of total: Int64?, rate: Double? = nil, left: Double? = nil, waiting: String? = nil
    ) -> DownloadProgressLine {
        DownloadProgressLine(
            progress: .init(completed: completed, total: total), bytesPerSecond: rate, secondsLeft: left,
            waiting: waiting)
    }

    @Test func aKnownTotalHasABarPercentSizesRateAndETA() {
        let line = self.line(5 * self.mebibyte, of: 10 * self.mebibyte, rate: Double(self.mebibyte), left: 5)
        let expected = "[###########............]  50%     5.0 MiB / 10.0 MiB     1.0 MiB/s  ETA 5s"
        #expect(line.terminal(width: 80) == expected)
        #expect(expected.count == 75)  // clear of the last column
        #expect(line.plain == "50%  5.0 MiB / 10.0 MiB  1.0 MiB/s  ETA 5s")
    }

    @Test func theBarStopsGrowingOnAWideTerminal() {
        let line = self.line(10 * self.mebibyte, of: 10 * self.mebibyte, rate: Double(self.mebibyte), left: 0)
        #expect(
            line.terminal(width: 200)
                == "[" + String(repeating: "#", count: 30) + "] 100%    10.0 MiB / 10.0 MiB     1.0 MiB/s  ETA 0s")
    }

    /// The bar keeps its length while the figures change, so that the line does not jitter.
    @Test func theBarKeepsItsLengthAsTheFiguresChange() {
        let early = self.line(1, of: 10 * self.mebibyte).terminal(width: 80)
        let late = self.line(9 * self.mebibyte, of: 10 * self.mebibyte, rate: 1023.9 * 1024, left: 3599)
            .terminal(width: 80)
        #expect(early.firstIndex(of: "]").map { early.distance(from: early.startIndex, to: $0) } == 24)
        #expect(late.firstIndex(of: "]").map { late.distance(from: late.startIndex, to: $0) } == 24)
        #expect(early.hasSuffix("   0%         1 B / 10.0 MiB             -  ETA -"))
        #expect(late.hasSuffix("  90%     9.0 MiB / 10.0 MiB  1023.9 KiB/s  ETA 59m59s"))
    }

    /// Too narrow for a bar: the figures, cut with an ellipsis at the edge.
    @Test func aNarrowTerminalDropsTheBarThenCutsTheLine() {
        let line = self.line(5 * self.mebibyte, of: 10 * self.mebibyte, rate: Double(self.mebibyte), left: 5)
        #expect(line.terminal(width: 60) == " 50%     5.0 MiB / 10.0 MiB     1.0 MiB/s  ETA 5s")
        #expect(line.terminal(width: 30) == " 50%     5.0 MiB / 10.0 MiB …")
        #expect(line.terminal(width: 30).count == 29)
        #expect(line.terminal(width: 1) == "…")
    }

    @Test func anUnknownTotalShowsBytesAndRateOnly() {
        let line = self.line(3 * self.mebibyte, of: nil, rate: 2048)
        #expect(line.terminal(width: 80) == "   3.0 MiB     2.0 KiB/s")
        #expect(line.plain == "3.0 MiB  2.0 KiB/s")
    }

    @Test func aWaitingReasonTakesThePlaceOfRateAndETA() {
        let retrying = "retrying in 4 s (attempt 2 of 10: Connection reset by peer)"
        let line = self.line(5 * self.mebibyte, of: 10 * self.mebibyte, rate: 0, waiting: retrying)
        let bar = "[" + String(repeating: "#", count: 15) + String(repeating: ".", count: 15) + "]"
        #expect(line.terminal(width: 140) == bar + "  50%     5.0 MiB / 10.0 MiB  " + retrying)
        // The bar keeps the length it has with a rate; the reason is what gets cut.
        let cut = line.terminal(width: 80)
        #expect(cut == "[###########............]  50%     5.0 MiB / 10.0 MiB  retrying in 4 s (attemp…")
        #expect(cut.count == 79)
        #expect(line.plain == "50%  5.0 MiB / 10.0 MiB  " + retrying)
        let queued = self.line(0, of: nil, waiting: "queued")
        #expect(queued.terminal(width: 80) == "       0 B  queued")
        #expect(queued.plain == "0 B  queued")
    }

    @Test func aTaskGivesItsDownloadAndWaitingReason() {
        var task = TaskRecord(
            id: 3, kind: .download, state: .running, method: "GET", url: "http://h/f", client: "afproxyctl",
            createdAt: Date(timeIntervalSince1970: 0), download: .init(completed: 2000, total: 4000),
            waiting: "queued")
        var rate = TransferRate()
        rate.add(time: 0, bytes: 1000)
        rate.add(time: 1, bytes: 2000)
        #expect(
            DownloadProgressLine(task: task, rate: rate)
                == self.line(2000, of: 4000, rate: 1000, left: 2, waiting: "queued"))
        task.waiting = nil
        task.state = .suspended
        #expect(DownloadProgressLine(task: task, rate: rate).waiting == "suspended")
        task.state = .running
        #expect(DownloadProgressLine(task: task, rate: rate).waiting == nil)
    }
}

import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyCLI

@Suite struct FormattingTests {
    private func task(
        _ kind: TaskKind, status: Int?, upload: TransferProgress, download: TransferProgress
    ) -> TaskRecord {
        TaskRecord(
            id: 1, kind: kind, state: .running, method: "PUT", url: "http://h/", client: "c",
            createdAt: Date(timeIntervalSince1970: 0), status: status, upload: upload, download: download)
    }

    @Test func anUploadOfUnknownLengthShowsItsUploadWhileItSends() {
        // The origin answered before the body ended: the column showed the download bytes.
        let early = self.task(.upload, status: 200, upload: .init(completed: 5_000_000), download: .init(completed: 10))
        #expect(Formatting.mainProgress(early).completed == 5_000_000)
        #expect(Formatting.progress(Formatting.mainProgress(early), terminal: false) == "4.8 MiB")
        let sending = self.task(.upload, status: nil, upload: .init(completed: 700, total: nil), download: .init())
        #expect(Formatting.mainProgress(sending).completed == 700)
    }

    @Test func afterTheBodyEndedTheResponseCounts() {
        let done = self.task(
            .upload, status: 200, upload: .init(completed: 5_000, total: 5_000),
            download: .init(completed: 10, total: 20))
        #expect(Formatting.progress(Formatting.mainProgress(done), terminal: false) == "50%")
        let data = self.task(
            .data, status: nil, upload: .init(completed: 0, total: 0), download: .init(completed: 3, total: 4))
        #expect(Formatting.progress(Formatting.mainProgress(data), terminal: false) == "75%")
    }

    @Test func sizesInBinaryUnitsWithOneDecimal() {
        #expect(Formatting.bytes(0) == "0 B")
        #expect(Formatting.bytes(1023) == "1023 B")
        #expect(Formatting.bytes(1024) == "1.0 KiB")
        #expect(Formatting.bytes(1536) == "1.5 KiB")
        #expect(Formatting.bytes(1_048_575) == "1024.0 KiB")  // rounds up, stays in the smaller unit
        #expect(Formatting.bytes(5_000_000) == "4.8 MiB")
        #expect(Formatting.bytes(3 << 30) == "3.0 GiB")
        #expect(Formatting.bytes(1 << 40) == "1.0 TiB")
        #expect(Formatting.bytes(1 << 50) == "1024.0 TiB")  // TiB is the largest unit
    }

    @Test func ratesPerSecondOrADashWhenNothingMoved() {
        #expect(Formatting.rate(nil) == "-")
        #expect(Formatting.rate(0) == "-")
        #expect(Formatting.rate(-3) == "-")
        #expect(Formatting.rate(100.9) == "100 B/s")
        #expect(Formatting.rate(2048.7) == "2.0 KiB/s")
    }

    @Test func durationsShortAndADashForWhatIsNotADuration() {
        #expect(Formatting.duration(nil) == "-")
        #expect(Formatting.duration(-1) == "-")
        #expect(Formatting.duration(.infinity) == "-")
        #expect(Formatting.duration(.nan) == "-")
        #expect(Formatting.duration(0) == "0s")
        #expect(Formatting.duration(59.9) == "59s")
        #expect(Formatting.duration(60) == "1m0s")
        #expect(Formatting.duration(3599) == "59m59s")
        #expect(Formatting.duration(3600) == "1h0m")
        #expect(Formatting.duration(90_061) == "25h1m")
    }

    @Test func millisecondsWithTwoDecimals() {
        #expect(Formatting.milliseconds(nil) == "-")
        #expect(Formatting.milliseconds(3) == "3.00 ms")
        #expect(Formatting.milliseconds(12.3456) == "12.35 ms")
        #expect(Formatting.milliseconds(0.5) == "0.50 ms")
        #expect(Formatting.milliseconds(0.001) == "0.00 ms")
    }

    @Test func decimalsArePaddedToTheirPlaces() {
        #expect(Formatting.decimal(2, 1) == "2.0")
        #expect(Formatting.decimal(2.25, 3) == "2.250")
        #expect(Formatting.decimal(3.14159, 2) == "3.14")
        #expect(Formatting.decimal(9.96, 1) == "10.0")
    }

    @Test func progressIsABarOnATerminalAndAPercentPiped() {
        let half = TransferProgress(completed: 50, total: 100)
        #expect(Formatting.progress(half, terminal: true) == "[######......]  50%")
        #expect(Formatting.progress(half, terminal: false) == "50%")
        #expect(Formatting.progress(.init(completed: 0, total: 100), terminal: true) == "[............]   0%")
        #expect(Formatting.progress(.init(completed: 999, total: 1000), terminal: true) == "[###########.]  99%")
        #expect(Formatting.progress(.init(completed: 100, total: 100), terminal: true) == "[############] 100%")
        // More than announced: full, not past it.
        #expect(Formatting.progress(.init(completed: 150, total: 100), terminal: false) == "100%")
    }

    @Test func progressWithoutAKnownTotalIsAByteCount() {
        #expect(Formatting.progress(.init(completed: 2048, total: nil), terminal: true) == "2.0 KiB")
        #expect(Formatting.progress(.init(completed: 0, total: 0), terminal: true) == "0 B")
    }

    @Test func theOtherKindsShowTheirDownload() {
        for kind in [TaskKind.data, .stream, .download] {
            let record = self.task(
                kind, status: nil, upload: .init(completed: 9, total: 10), download: .init(completed: 1, total: 2))
            #expect(Formatting.mainProgress(record) == .init(completed: 1, total: 2), "\(kind)")
        }
        let answered = self.task(
            .upload, status: 201, upload: .init(completed: 10, total: 10), download: .init(completed: 1, total: 2))
        #expect(Formatting.mainProgress(answered) == .init(completed: 1, total: 2))
    }

    @Test func rateAndTimeLeftFromTheAverageSinceTheStart() {
        let start = Date(timeIntervalSince1970: 0)
        var record = self.task(.data, status: 200, upload: .init(), download: .init(completed: 1000, total: 5000))
        let (rate, eta) = Formatting.rateAndETA(TaskRow(record), now: start.addingTimeInterval(10))
        #expect(rate == 100)
        #expect(eta == 40)

        record.download.total = nil
        let (unknownRate, unknownETA) = Formatting.rateAndETA(TaskRow(record), now: start.addingTimeInterval(10))
        #expect(unknownRate == 100)
        #expect(unknownETA == nil)

        // Too young to say, nothing moved, or over: neither.
        let (youngRate, _) = Formatting.rateAndETA(TaskRow(record), now: start.addingTimeInterval(0.15))
        #expect(youngRate == nil)
        record.download.completed = 0
        #expect(Formatting.rateAndETA(TaskRow(record), now: start.addingTimeInterval(10)).0 == nil)
        record.download.completed = 1000
        record.state = .completed
        #expect(Formatting.rateAndETA(TaskRow(record), now: start.addingTimeInterval(10)).0 == nil)
    }

    @Test func statesAreColouredOnlyOnATerminal() {
        #expect(Formatting.color(.running, "running", terminal: false) == "running")
        #expect(Formatting.color(.running, "running", terminal: true) == "\u{1B}[32mrunning\u{1B}[0m")
        #expect(Formatting.color(.suspended, "s", terminal: true) == "\u{1B}[33ms\u{1B}[0m")
        #expect(Formatting.color(.canceling, "c", terminal: true) == "\u{1B}[35mc\u{1B}[0m")
        #expect(Formatting.color(.completed, "d", terminal: true) == "\u{1B}[2md\u{1B}[0m")
    }

    @Test func trimmingTakesSpacesAndTabsFromBothEndsOnly() {
        #expect(" \t a b \t ".trimmedSpaces == "a b")
        #expect("x: \tvalue\t".split(separator: ":")[1].trimmedSpaces == "value")
        #expect(" \t ".trimmedSpaces == "")
        #expect("\r\nkept\n".trimmedSpaces == "\r\nkept\n")
    }
}

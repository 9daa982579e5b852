import Testing

@testable import AFProxyCLI

/// The rate `download --wait` shows: over the last seconds, not since the start.
@Suite struct TransferRateTests {
    @Test func noRateUntilTheSamplesSpanHalfASecond() {
        var rate = TransferRate()
        #expect(rate.bytesPerSecond == nil)
        rate.add(time: 10, bytes: 0)
        #expect(rate.bytesPerSecond == nil)
        rate.add(time: 10.25, bytes: 1000)
        #expect(rate.bytesPerSecond == nil)
        #expect(rate.secondsLeft(total: 10_000) == nil)
        rate.add(time: 10.5, bytes: 2000)
        #expect(rate.bytesPerSecond == 4000)
        #expect(rate.secondsLeft(total: 10_000) == 2)
    }

    @Test func theRateIsTakenOverTheLastFiveSeconds() {
        var rate = TransferRate()
        // 10 s at 1000 B/s, then 5 s at 100 B/s: the average since the start would say 700.
        for second in 0...10 { rate.add(time: Double(second), bytes: Int64(second) * 1000) }
        #expect(rate.bytesPerSecond == 1000)
        for second in 11...15 { rate.add(time: Double(second), bytes: 10_000 + Int64(second - 10) * 100) }
        #expect(rate.bytesPerSecond == 100)
        #expect(rate.secondsLeft(total: 11_000) == 5)
    }

    /// Polls do not come on the second: the window keeps the sample just before its start.
    @Test func theWindowReachesBackToTheSampleBeforeItsStart() {
        var rate = TransferRate()
        rate.add(time: 0, bytes: 0)
        rate.add(time: 3, bytes: 3000)
        rate.add(time: 7, bytes: 7000)
        #expect(rate.bytesPerSecond == 1000)  // from 0: the sample at 3 alone would span 4 s, not 5
        rate.add(time: 9, bytes: 8000)
        #expect(rate.bytesPerSecond == 5000.0 / 6)  // from 3 to 9
    }

    @Test func aStallShowsNoRateAndNoTimeLeft() {
        var rate = TransferRate()
        rate.add(time: 0, bytes: 500)
        rate.add(time: 6, bytes: 500)
        #expect(rate.bytesPerSecond == 0)
        #expect(rate.secondsLeft(total: 1000) == nil)
    }

    @Test func noTimeLeftWithoutATotalAndNoneBelowZero() {
        var rate = TransferRate()
        rate.add(time: 0, bytes: 0)
        rate.add(time: 1, bytes: 2000)
        #expect(rate.secondsLeft(total: nil) == nil)
        #expect(rate.secondsLeft(total: 1000) == 0)  // more than announced
    }

    /// The download started again from 0: the old attempt's speed does not count.
    @Test func fewerBytesThanBeforeStartsAfresh() {
        var rate = TransferRate()
        for second in 0...4 { rate.add(time: Double(second), bytes: Int64(second) * 10_000) }
        rate.add(time: 5, bytes: 100)
        #expect(rate.bytesPerSecond == nil)
        rate.add(time: 6, bytes: 1100)
        #expect(rate.bytesPerSecond == 1000)
    }
}

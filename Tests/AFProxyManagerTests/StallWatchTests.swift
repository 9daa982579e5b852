import Testing

@testable import AFProxyManager

/// The safety net's decision, fed sweeps at chosen times.
@Suite struct StallWatchTests {
    private let start = ContinuousClock.now
    private let limit = Duration.seconds(120)

    private func at(_ seconds: Int) -> ContinuousClock.Instant { self.start + .seconds(seconds) }

    @Test func aTaskWithoutProgressIsStalledOnlyPastTheLimit() {
        var watch = StallWatch()
        let task = StallWatch.Candidate(id: 7, bytes: 15)
        #expect(watch.sweep([task], now: self.at(0), limit: self.limit).isEmpty)
        #expect(watch.sweep([task], now: self.at(120), limit: self.limit).isEmpty)  // not longer yet
        #expect(watch.sweep([task], now: self.at(121), limit: self.limit) == [7])
        #expect(watch.watching == 0)  // named once, then forgotten
    }

    @Test func progressStartsTheWaitAgain() {
        var watch = StallWatch()
        #expect(watch.sweep([.init(id: 1, bytes: 0)], now: self.at(0), limit: self.limit).isEmpty)
        #expect(watch.sweep([.init(id: 1, bytes: 10)], now: self.at(100), limit: self.limit).isEmpty)
        #expect(watch.sweep([.init(id: 1, bytes: 10)], now: self.at(200), limit: self.limit).isEmpty)
        #expect(watch.sweep([.init(id: 1, bytes: 10)], now: self.at(221), limit: self.limit) == [1])
    }

    @Test func aTaskThatIsNoLongerACandidateIsForgotten() {
        var watch = StallWatch()
        _ = watch.sweep([.init(id: 1, bytes: 0), .init(id: 2, bytes: 0)], now: self.at(0), limit: self.limit)
        #expect(watch.sweep([.init(id: 2, bytes: 0)], now: self.at(60), limit: self.limit).isEmpty)
        #expect(watch.watching == 1)
        // Back as a candidate later (it cannot be, but if it were): its wait starts again.
        #expect(
            watch.sweep([.init(id: 1, bytes: 0), .init(id: 2, bytes: 0)], now: self.at(121), limit: self.limit) == [2])
        #expect(watch.sweep([.init(id: 1, bytes: 0)], now: self.at(200), limit: self.limit).isEmpty)
    }
}

import AFProxyModel
import AFProxyRules
import Testing

@Suite struct TokenBucketTests {
    let start = ContinuousClock.now

    @Test func startsEmptyAndFillsAtTheRateUpToItsCapacity() {
        var bucket = TokenBucket(rate: 1_000_000, now: self.start)
        #expect(bucket.tokens == 0)
        #expect(bucket.wait(for: 16_384) == .nanoseconds(16_384_000))
        bucket.refill(now: self.start + .milliseconds(50))
        #expect(bucket.tokens == 50_000)
        bucket.refill(now: self.start + .seconds(5))
        #expect(bucket.tokens == 100_000)  // a tenth of a second at the rate
        #expect(bucket.capacity == 100_000)
        #expect(TokenBucket(rate: 100_000, now: self.start).capacity == TokenBucket.minimumCapacity)
    }

    @Test func debtIsRepaidBeforeTheNextPiece() {
        var bucket = TokenBucket(rate: 100_000, now: self.start)
        bucket.refill(now: self.start + .seconds(1))
        bucket.take(256 << 10)
        #expect(bucket.tokens < 0)
        // 262,144 - 65,536 owed: 1.96608 s until the bucket is back at zero.
        #expect(bucket.wait(for: 0) == .nanoseconds(1_966_080_000))
        bucket.refill(now: self.start + .seconds(1) + .nanoseconds(1_966_080_000))
        #expect(bucket.wait(for: 0) == nil)
    }

    @Test func aNeedLargerThanTheCapacityWaitsOnlyForAFullBucket() {
        var bucket = TokenBucket(rate: 100_000, now: self.start)
        bucket.refill(now: self.start + .seconds(10))
        #expect(bucket.wait(for: 1 << 20) == nil)
    }

    @Test func aRateChangeKeepsWhatAccruedAtTheOldRate() {
        var bucket = TokenBucket(rate: 1_000_000, now: self.start)
        bucket.refill(now: self.start + .milliseconds(20))
        bucket.setRate(2_000_000, now: self.start + .milliseconds(40))
        #expect(bucket.tokens == 40_000)
        bucket.refill(now: self.start + .milliseconds(50))
        #expect(bucket.tokens == 60_000)
    }

    @Test func refusedTasksTakeTurnsAndOneThatStopsAskingIsDropped() {
        var bucket = TokenBucket(rate: 1_000_000, now: self.start)
        bucket.enqueue(1, now: self.start)
        bucket.enqueue(2, now: self.start)
        bucket.enqueue(1, now: self.start)  // once
        #expect(bucket.waiters == [1, 2])
        let secondFirst = bucket.isTurn(of: 2, now: self.start)
        #expect(!secondFirst)
        let first = bucket.isTurn(of: 1, now: self.start)
        #expect(first)
        bucket.dequeue(1)
        let second = bucket.isTurn(of: 2, now: self.start)
        #expect(second)
        bucket.enqueue(3, now: self.start + .seconds(2))
        // 2 last asked 2 s ago: stale, dropped.
        let third = bucket.isTurn(of: 3, now: self.start + .seconds(2))
        #expect(third)
        #expect(bucket.waiters == [3])
    }
}

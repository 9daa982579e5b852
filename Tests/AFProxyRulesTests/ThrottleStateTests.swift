import AFProxyModel
import AFProxyRules
import Testing

/// The buckets driven with an injected clock: what the transports see, no I/O.
@Suite struct ThrottleStateTests {
    let start = ContinuousClock.now

    func state(_ body: (inout ThrottleRuleSet) -> Void) -> ThrottleState {
        var state = ThrottleState()
        state.update(now: self.start) { body(&$0) }
        return state
    }

    /// Simulates consumers that each take `piece` bytes whenever they are granted, asking again
    /// when told, for `seconds`; answers the bytes each moved.
    func run(_ state: inout ThrottleState, tasks: [Int], piece: Int, seconds: Int) -> [Int: Int] {
        var next: [Int: ContinuousClock.Instant] = [:]
        for task in tasks { next[task] = self.start }
        var moved: [Int: Int] = [:]
        let end = self.start + .seconds(seconds)
        while true {
            let (task, at) = next.min { $0.value < $1.value || ($0.value == $1.value && $0.key < $1.key) }!
            guard at < end else { break }
            switch state.acquire(task: task, host: "example.org", .down, need: piece, now: at) {
            case .go:
                state.take(task: task, host: "example.org", .down, piece)
                moved[task, default: 0] += piece
                next[task] = at + .microseconds(100)
            case .wait(let wait):
                next[task] = at + wait
            }
        }
        return moved
    }

    @Test func oneTaskMovesAtTheRate() {
        for rate in [100_000, 1_000_000, 100_000_000] {
            var state = self.state { $0.set(.global, rate: ByteRate(bytesPerSecond: Int64(rate)), directions: [.down]) }
            // curl's pieces: 16 KiB for a proxied request, 256 KiB for a fast download.
            let moved = self.run(&state, tasks: [1], piece: rate >= 10_000_000 ? 256 << 10 : 16_384, seconds: 10)[1]!
            let error = abs(Double(moved) - Double(rate) * 10) / (Double(rate) * 10)
            #expect(error < 0.02, "rate \(rate): moved \(moved)")
        }
    }

    @Test func aSharedBucketIsSharedFairly() {
        var state = self.state { $0.set(.global, rate: ByteRate(bytesPerSecond: 2_000_000), directions: [.down]) }
        let moved = self.run(&state, tasks: [1, 2, 3], piece: 16_384, seconds: 10)
        let total = moved.values.reduce(0, +)
        #expect(abs(Double(total) - 20_000_000) / 20_000_000 < 0.02)
        for task in [1, 2, 3] {
            let share = Double(moved[task] ?? 0) / Double(total)
            #expect(abs(share - 1.0 / 3) < 0.03, "task \(task): \(share)")
        }
    }

    @Test func theTightestBucketLimitsAndOthersAreCharged() {
        var state = self.state { rules in
            rules.set(.global, rate: ByteRate(bytesPerSecond: 10_000_000), directions: [.down])
            rules.set(.task(1), rate: ByteRate(bytesPerSecond: 1_000_000), directions: [.down])
        }
        let moved = self.run(&state, tasks: [1], piece: 16_384, seconds: 5)[1]!
        #expect(abs(Double(moved) - 5_000_000) / 5_000_000 < 0.02)
        let global = state.buckets[.init(scope: .global, direction: .down)]!
        #expect(global.tokens < global.capacity)  // the global bucket paid for them too
    }

    @Test func noRuleNoWaitAndTheOtherDirectionIsFree() {
        var state = self.state { $0.set(.global, rate: ByteRate(bytesPerSecond: 1000), directions: [.up]) }
        let down = state.acquire(task: 1, host: "x", .down, need: 1 << 20, now: self.start)
        #expect(down == .go(available: .max))
        let up = state.acquire(task: 1, host: "x", .up, need: 10, now: self.start)
        #expect(up == .wait(.milliseconds(10)))
        #expect(ThrottleState().isActive == false)
    }

    @Test func waitsAreCappedSoAChangedRuleIsSeenSoon() {
        var state = self.state { $0.set(.global, rate: ByteRate(bytesPerSecond: 1000), directions: [.down]) }
        let before = state.acquire(task: 1, host: "x", .down, need: 16_384, now: self.start)
        #expect(before == .wait(ThrottleState.longestWait))
        state.update(now: self.start + .milliseconds(1)) { _ = $0.remove(.global) }
        let after = state.acquire(task: 1, host: "x", .down, need: 16_384, now: self.start + .milliseconds(200))
        #expect(after == .go(available: .max))
    }

    @Test func aTaskRuleGoesWithItsTask() {
        var state = self.state { $0.set(.task(4), rate: ByteRate(bytesPerSecond: 1000), directions: [.down]) }
        #expect(state.isActive)
        state.forget(task: 4, now: self.start)
        #expect(!state.isActive)
    }
}

extension ThrottleStateTests {
    @Test func aTaskHeldByItsOwnRuleDoesNotHoldUpTheGlobalQueue() {
        // Task 1 has its own 100K rule under a 2M global rule that task 2 shares: task 2 gets
        // the rest of the global rate, not what is left after waiting on task 1 in the queue.
        var state = self.state { rules in
            rules.set(.global, rate: ByteRate(bytesPerSecond: 2_000_000), directions: [.down])
            rules.set(.task(1), rate: ByteRate(bytesPerSecond: 100_000), directions: [.down])
        }
        let moved = self.run(&state, tasks: [1, 2], piece: 16_384, seconds: 10)
        #expect(abs(Double(moved[1]!) - 1_000_000) / 1_000_000 < 0.05, "\(moved)")
        #expect(abs(Double(moved[2]!) - 19_000_000) / 19_000_000 < 0.05, "\(moved)")
    }
}

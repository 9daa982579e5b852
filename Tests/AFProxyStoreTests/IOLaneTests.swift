import AFProxyModel
import AFProxyStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The I/O executor's promise to a download: its jobs run in the order given, and a lane stuck
/// on its disk holds no other lane.
@Suite struct IOLaneTests {
    /// Polls until `done`, for at most 30 s (a deadline for a broken executor, not a timing check).
    func eventually(_ done: () -> Bool) -> Bool {
        for _ in 0..<3000 {
            if done() { return true }
            usleep(10_000)
        }
        return done()
    }

    @Test func aLaneRunsItsJobsInTheOrderGiven() {
        let lane = IOExecutor.shared.lane()
        let seen = Locked<[Int]>([])
        for index in 0..<5000 {
            lane.submit { seen.withLock { $0.append(index) } }
            if index % 700 == 0 { usleep(1000) }  // let drains end and new ones start on the way
        }
        #expect(self.eventually { seen.withLock { $0.count } == 5000 })
        #expect(seen.withLock { $0 } == Array(0..<5000))
    }

    @Test func aLaneStuckOnItsDiskHoldsNoOtherLane() {
        let stuck = IOExecutor.shared.lane()
        let released = Locked(false)
        let after = Locked(false)
        stuck.submit {
            while !released.withLock({ $0 }) { usleep(1000) }
        }
        stuck.submit { after.withLock { $0 = true } }
        let other = IOExecutor.shared.lane()
        let ran = Locked(false)
        other.submit { ran.withLock { $0 = true } }
        #expect(self.eventually { ran.withLock { $0 } })
        #expect(!after.withLock { $0 })
        released.withLock { $0 = true }
        #expect(self.eventually { after.withLock { $0 } })
    }
}

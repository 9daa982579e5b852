import AFProxyModel
import Testing

@testable import AFProxyNetwork

/// The lookup on a runner the test drives: the daemon's is a lane of the I/O executor.
@Suite struct ClientProcessLookupTests {
    /// Keeps the jobs given to it until the test runs them, in order.
    private final class HeldJobs: Sendable {
        private let jobs = Locked<[@Sendable () -> Void]>([])

        var count: Int { self.jobs.withLock { $0.count } }

        func submit(_ job: @escaping @Sendable () -> Void) {
            self.jobs.withLock { $0.append(job) }
        }

        func runAll() {
            let jobs = self.jobs.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            for job in jobs { job() }
        }
    }

    /// A loopback connection nobody holds: the finder finds no process for it.
    private let nobody = ConnectionAddresses(
        local: .init(address: [127, 0, 0, 1], port: 1), peer: .init(address: [127, 0, 0, 1], port: 2))

    @Test func lookupsRunOnTheGivenRunnerAndPastTheCapNoneIsQueued() {
        let held = HeldJobs()
        let lookup = ClientProcessLookup(capacity: 2, serial: held.submit, unit: { _ in nil })
        let first = lookup.start(self.nobody)
        let second = lookup.start(self.nobody)
        let third = lookup.start(self.nobody)
        #expect(held.count == 2)
        #expect(!first.isSettled && !second.isSettled)
        #expect(third.isSettled && third.process == nil)
        held.runAll()
        #expect(first.isSettled && second.isSettled)
        // The queue emptied: a new lookup is queued again.
        let fourth = lookup.start(self.nobody)
        #expect(held.count == 1 && !fourth.isSettled)
        held.runAll()
        #expect(fourth.isSettled)
    }
}

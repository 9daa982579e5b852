import AFProxyModel
import NIOConcurrencyHelpers
import NIOPosix

/// Where the daemon's blocking disk work runs: a download's writes, truncations, checksum and
/// rename, and the state files (`DownloadJournal`). The curl session thread and the event loops
/// must never wait on a disk (the contract in `ManagedTask`); here a write may take as long as
/// the disk does, and what waits for it is only the work queued behind it on its lane (a
/// download's transfer pauses while its writer is behind: `DownloadStateMachine.unwrittenLimit`).
///
/// A few threads of a `NIOThreadPool` of its own rather than the shared one: a disk that stops
/// answering holds a thread per lane writing to it, and must not hold the resolver's and the
/// password checks' threads with them. Process-wide, like the global dispatch queue and the
/// serial queues it replaces; the daemon shuts it down last (`shutdown`), after every writer has
/// flushed.
package final class IOExecutor: Sendable {
    package static let shared = IOExecutor(threads: 4)

    private let pool: NIOThreadPool

    init(threads: Int) {
        self.pool = NIOThreadPool(numberOfThreads: threads)
        self.pool.start()
    }

    /// A new lane: jobs that run one after another, in the order given.
    package func lane() -> IOLane {
        IOLane(executor: self)
    }

    /// Jobs submitted after this run at once, on the submitting thread (NIO hands a stopped
    /// pool's work back as `.cancelled`): a late write is still made, and no lane waits forever.
    /// Why at all, for a pool that lives as long as the process: a pool never stopped keeps its
    /// queue in an enum payload whose spare bits LeakSanitizer does not read as a pointer, which
    /// it then reports as a leak at every exit (as it does for NIO's own singleton pool).
    package func shutdown() async {
        try? await self.pool.shutdownGracefully()
    }

    fileprivate func submit(_ work: @escaping @Sendable () -> Void) {
        self.pool.submit { _ in work() }
    }
}

/// One owner's disk work in order: a download's writes land in the order its bytes arrived, and
/// what follows them (the end of an attempt, the checksum, the rename) sees every one of them on
/// disk. Lanes run beside each other on the executor's threads; a lane holds a thread only while
/// it has work, and gives it back after each batch so that a busy download does not starve others.
package final class IOLane: Sendable {
    private let executor: IOExecutor
    private let queue = Locked(Queue())

    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        /// A drain is submitted or running: a new job joins it instead of submitting another.
        var draining = false
    }

    fileprivate init(executor: IOExecutor) {
        self.executor = executor
    }

    /// Runs `job` after every job submitted before it.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        let start = self.queue.withLock { queue in
            queue.jobs.append(job)
            defer { queue.draining = true }
            return !queue.draining
        }
        if start { self.executor.submit { self.drain() } }
    }

    /// Runs `job` after every job submitted before it and returns once it ran. Blocks the
    /// caller: only for one that may wait on a disk (the daemon's stop), never an event loop or
    /// the session thread.
    package func wait(for job: @escaping @Sendable () -> Void) {
        let done = ConditionLock(value: false)
        self.submit {
            job()
            done.lock()
            done.unlock(withValue: true)
        }
        done.lock(whenValue: true)
        done.unlock()
    }

    private func drain() {
        let batch = self.queue.withLock { queue in
            defer { queue.jobs.removeAll(keepingCapacity: true) }
            return queue.jobs
        }
        for job in batch { job() }
        let more = self.queue.withLock { queue in
            if queue.jobs.isEmpty { queue.draining = false }
            return queue.draining
        }
        if more { self.executor.submit { self.drain() } }
    }
}

import AFProxyModel

/// Looks up the process of each local client connection off the event loops, once per
/// connection: `start` answers a slot at once and the finding goes into it from the blocking
/// work's pool. Bounded: past `capacity` lookups waiting (a burst of connections), a connection
/// gets no lookup rather than a longer queue, and its tasks show no process.
package final class ClientProcessLookup: @unchecked Sendable {
    /// Runs a job after every job given before it, one at a time, off the event loops.
    package typealias Serial = @Sendable (@escaping @Sendable () -> Void) -> Void

    // The finder and its caches are touched by one job at a time, in `serial`, only.
    private let finder: ClientProcessFinder
    private let serial: Serial
    private let waiting = Locked(0)
    private let capacity: Int

    /// - Parameters:
    ///   - serial: where the lookups run; in the daemon a lane of the I/O executor, whose
    ///     ordering is what lets the finder keep its caches without a lock. The daemon's
    ///     blocking work shares that one pool (the contract in `ManagedTask`); a lookup reads
    ///     `/proc`, which waits on no disk.
    ///   - unit: the systemd unit of a process by pid (AFProxySystemd's `SystemdUnit.of`), or
    ///     nil-returning where there is no systemd.
    package init(capacity: Int = 256, serial: @escaping Serial, unit: @escaping @Sendable (Int32) -> String?) {
        self.capacity = capacity
        self.serial = serial
        self.finder = ClientProcessFinder(unit: unit)
    }

    /// Queues the lookup of the client at the other end of `addresses`.
    package func start(_ addresses: ConnectionAddresses) -> ClientProcessSlot {
        let queued = self.waiting.withLock { waiting in
            guard waiting < self.capacity else { return false }
            waiting += 1
            return true
        }
        guard queued else { return ClientProcessSlot(settled: nil) }
        let slot = ClientProcessSlot()
        self.serial {
            self.waiting.withLock { $0 -= 1 }
            slot.settle(self.finder.find(addresses))
        }
        return slot
    }
}

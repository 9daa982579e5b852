import AFProxyModel
import Dispatch

/// Looks up the process of each local client connection off the event loops, once per
/// connection: `start` answers a slot at once and the finding goes into it from a queue of the
/// lookup's own. Bounded: past `capacity` lookups waiting (a burst of connections), a connection
/// gets no lookup rather than a longer queue, and its tasks show no process.
package final class ClientProcessLookup: @unchecked Sendable {
    // The finder and its caches are touched on `queue` only.
    private let finder: ClientProcessFinder
    private let queue = DispatchQueue(label: "afproxy.client-process", qos: .utility)
    private let waiting = Locked(0)
    private let capacity: Int

    /// - Parameters:
    ///   - unit: the systemd unit of a process by pid (AFProxySystemd's `SystemdUnit.of`), or
    ///     nil-returning where there is no systemd.
    package init(capacity: Int = 256, unit: @escaping @Sendable (Int32) -> String?) {
        self.capacity = capacity
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
        self.queue.async {
            self.waiting.withLock { $0 -= 1 }
            slot.settle(self.finder.find(addresses))
        }
        return slot
    }
}

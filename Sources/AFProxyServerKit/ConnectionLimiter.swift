import Synchronization

/// Counts open connections against `limit`: a server asks it for a slot as it accepts each
/// connection and gives the slot back when the connection closes.
package final class ConnectionLimiter: Sendable {
    private let open = Atomic<Int>(0)
    package let limit: Int

    package init(limit: Int) {
        self.limit = limit
    }

    /// Takes a slot, or answers false, taking nothing, when all `limit` are taken.
    package func acquire() -> Bool {
        let now = self.open.add(1, ordering: .relaxed).newValue
        guard now <= self.limit else {
            self.open.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    package func release() {
        self.open.subtract(1, ordering: .relaxed)
    }

    package var count: Int { self.open.load(ordering: .relaxed) }
}

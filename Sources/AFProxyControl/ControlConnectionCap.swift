import Synchronization

/// Counts open control connections against `limit`; the server asks it for a slot as it accepts
/// each connection and gives the slot back when the connection closes.
final class ControlConnectionCap: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)

    init(limit: Int = ControlLimits.maxConnections) {
        self.limit = limit
    }

    /// Takes a slot, or answers false, taking nothing, when all `limit` are taken.
    func acquire() -> Bool {
        let now = self.open.add(1, ordering: .relaxed).newValue
        guard now <= self.limit else {
            self.open.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func release() {
        self.open.subtract(1, ordering: .relaxed)
    }

    var count: Int { self.open.load(ordering: .relaxed) }
}

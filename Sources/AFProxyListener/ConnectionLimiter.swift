import Synchronization

/// Counts open client connections against `maxConnections`.
final class ConnectionLimiter: Sendable {
    private let open = Atomic<Int>(0)
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Answers false, taking nothing, when the limit is reached.
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

import Synchronization

/// The bytes that receive windows may hold beyond their minimum, summed over the daemon: with
/// thousands of transfers, windows that grew without a cap would add up to gigabytes. Over the
/// limit a window does not grow, and its transfer keeps the minimum.
package final class BufferBudget: Sendable {
    package let limit: Int
    private let used = Atomic<Int>(0)

    package init(limit: Int) {
        self.limit = limit
    }

    package var inUse: Int { self.used.load(ordering: .relaxed) }

    /// Takes `bytes` if they fit under the limit.
    package func reserve(_ bytes: Int) -> Bool {
        var current = self.used.load(ordering: .relaxed)
        while current + bytes <= self.limit {
            let (exchanged, original) = self.used.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    package func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        self.used.subtract(bytes, ordering: .relaxed)
    }
}

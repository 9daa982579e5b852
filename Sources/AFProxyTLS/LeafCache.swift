/// The values minted per name, at most `capacity` of them, the least recently used going first:
/// a client may name as many hosts as it likes, and each certificate costs memory.
///
/// Eviction scans for the oldest use: with a thousand entries that is a few microseconds, paid
/// only when a new name arrives at a full cache, and far simpler than a linked list.
struct LeafCache<Value: Sendable>: Sendable {
    let capacity: Int
    private var entries: [String: (value: Value, used: UInt64)] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    var count: Int { self.entries.count }

    /// The value for `name`, marked as used now.
    mutating func value(for name: String) -> Value? {
        guard let entry = self.entries[name] else { return nil }
        self.clock += 1
        self.entries[name] = (entry.value, self.clock)
        return entry.value
    }

    mutating func insert(_ value: Value, for name: String) {
        self.clock += 1
        if self.entries[name] == nil, self.entries.count >= self.capacity,
            let oldest = self.entries.min(by: { $0.value.used < $1.value.used })?.key
        {
            self.entries[oldest] = nil
        }
        self.entries[name] = (value, self.clock)
    }

    func contains(_ name: String) -> Bool { self.entries[name] != nil }
}

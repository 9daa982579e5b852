/// A bounded ring of completed task records, newest last: `list --all` and the export read it,
/// and its bound is why memory does not grow with the number of requests served.
package struct TaskHistory: Sendable {
    package let capacity: Int
    private var ring: [TaskRecord] = []
    private var next = 0

    package init(capacity: Int) {
        self.capacity = max(0, capacity)
        self.ring.reserveCapacity(min(self.capacity, 1024))
    }

    package mutating func append(_ record: TaskRecord) {
        guard self.capacity > 0 else { return }
        if self.ring.count < self.capacity {
            self.ring.append(record)
        } else {
            self.ring[self.next] = record
            self.next = (self.next + 1) % self.capacity
        }
    }

    /// Oldest first.
    package var records: [TaskRecord] {
        Array(self.ring[self.next...] + self.ring[..<self.next])
    }

    package var count: Int { self.ring.count }

    package func record(id: Int) -> TaskRecord? {
        self.ring.first { $0.id == id }
    }
}

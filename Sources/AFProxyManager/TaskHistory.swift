import AFProxyModel

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

    /// The record of task `id`, looked for from the newest: a task that just completed is found
    /// at once.
    package func newest(id: Int) -> TaskRecord? {
        guard !self.ring.isEmpty else { return nil }
        var index = (self.next + self.ring.count - 1) % self.ring.count
        for _ in 0..<self.ring.count {
            if self.ring[index].id == id { return self.ring[index] }
            index = (index + self.ring.count - 1) % self.ring.count
        }
        return nil
    }

    /// Applies `body` to the records, newest first, until it answers true.
    mutating func updateFirst(_ body: (inout TaskRecord) -> Bool) {
        guard !self.ring.isEmpty else { return }
        var index = (self.next + self.ring.count - 1) % self.ring.count
        for _ in 0..<self.ring.count {
            if body(&self.ring[index]) { return }
            index = (index + self.ring.count - 1) % self.ring.count
        }
    }
}

extension TaskHistory {
    /// Changes the record of task `id` if it is still kept (a late finding about a completed task).
    package mutating func update(id: Int, _ body: (inout TaskRecord) -> Void) {
        self.updateFirst { record in
            guard record.id == id else { return false }
            body(&record)
            return true
        }
    }
}

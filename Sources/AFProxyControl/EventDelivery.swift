import AFProxyModel

/// One event-stream reader's share of the daemon's memory, as a plain value: at most `capacity`
/// events wait between the publishing thread and the connection's event loop, and none is written
/// while the socket is not writable (its send buffer and NIO's are full: the reader stopped).
/// Everything else is dropped and counted, and the count goes out as one `missed` line as soon
/// as the reader takes bytes again, so a reader that pauses learns what it lost and the daemon
/// never holds more than the bound for it.
package struct EventDelivery: Sendable, Equatable {
    package let capacity: Int
    /// Handed to the event loop, not yet written or dropped there.
    package private(set) var queued = 0
    /// Dropped since the last `missed` line.
    package private(set) var missed = 0

    package init(capacity: Int) {
        self.capacity = capacity
    }

    /// On the publishing thread: whether to hand the event to the event loop.
    package mutating func offer() -> Bool {
        guard self.queued < self.capacity else {
            self.missed += 1
            return false
        }
        self.queued += 1
        return true
    }

    package enum Write: Sendable, Equatable {
        case drop
        case write
        /// A `missed` line with this count, then the event.
        case writeAfterMissed(Int)
    }

    /// On the event loop, for an event `offer` let through.
    package mutating func dequeue(writable: Bool) -> Write {
        self.queued -= 1
        guard writable else {
            self.missed += 1
            return .drop
        }
        guard self.missed > 0 else { return .write }
        defer { self.missed = 0 }
        return .writeAfterMissed(self.missed)
    }

    /// On the event loop, when the socket can take bytes again: the count for a `missed` line now,
    /// rather than waiting for the next event, which may be long in coming.
    package mutating func becameWritable() -> Int? {
        guard self.missed > 0 else { return nil }
        defer { self.missed = 0 }
        return self.missed
    }
}

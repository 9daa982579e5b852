/// How many response bytes one task may have on their way to its client (gathered for it, or
/// handed to its connection and not yet written to the socket), and how that grows.
///
/// Every transfer starts at `minimum`, which is what a client that reads slowly costs: a fixed
/// large window made every slow download hold that much. A client that drains its window promptly shows it can take more, and the window
/// doubles, up to `maximum`, as long as the daemon-wide `BufferBudget` has room; a client that
/// then keeps the transfer paused for long goes back to the minimum and gives the budget back.
/// A plain value: the HTTP task's state machine feeds it the drains it sees and applies what it answers.
package struct ReceiveWindow: Sendable, Equatable {
    package static let minimum = 8 << 10
    package static let maximum = 1 << 20
    /// Drained within this long after the transfer paused for the client: the client keeps up.
    package static let fastDrain: Duration = .milliseconds(50)
    /// Paused this long: the client reads slowly, a big window would only hold memory.
    package static let slowDrain: Duration = .seconds(1)
    /// What a window may grow to before the client has taken `growAfter`, and only while the
    /// kernel holds nothing unsent for it at the drain. The kernel's send buffer for the client
    /// (autotuned up to tcp_wmem's maximum, 4 MiB by default) swallows what is written however
    /// slowly the client reads, so every early drain looks prompt: growing from the first drain
    /// gave slow clients large windows, and growing to this much on prompt drains alone made a
    /// slow client of bench/slow_clients cost 120 KiB instead of 67. A slow reader's unsent
    /// bytes pile up within its first few kilobytes; a fast one's stay at none. Keeping every
    /// transfer at `minimum` until `growAfter` made a response of a few MiB pay a pause and a
    /// resume per 8 KiB.
    package static let earlyMaximum = 64 << 10
    /// Past `earlyMaximum` a window grows only once the client took this much: more than the
    /// kernel's buffers for it can hold.
    package static let growAfter: Int64 = 8 << 20

    package private(set) var size = Self.minimum

    package init() {}

    /// Resume receiving once fewer bytes than this are on their way.
    package var lowWatermark: Int { self.size / 2 }

    /// What a drain asks of the budget: bytes to reserve before growing, or to give back.
    package enum Change: Sendable, Equatable {
        case keep
        case grow(reserve: Int)
        case shrink(release: Int)
    }

    /// The client drained below the low watermark `paused` after the transfer had paused for it,
    /// having taken `written` bytes so far; `unsent` (asked only when it decides) is what the
    /// kernel still holds unsent for it, nil when unknown.
    package func afterDrain(paused: Duration, written: Int64, unsent: @autoclosure () -> Int? = nil) -> Change {
        if paused <= Self.fastDrain {
            let limit =
                written >= Self.growAfter
                ? Self.maximum : self.size < Self.earlyMaximum && unsent() == 0 ? Self.earlyMaximum : self.size
            if self.size < limit { return .grow(reserve: min(self.size * 2, limit) - self.size) }
        }
        if paused >= Self.slowDrain && self.size > Self.minimum {
            return .shrink(release: self.size - Self.minimum)
        }
        return .keep
    }

    /// Applies a change the budget granted (`grow`) or that needs no grant (`shrink`).
    package mutating func apply(_ change: Change) {
        switch change {
        case .keep: break
        case .grow(let reserve): self.size += reserve
        case .shrink(let release): self.size -= release
        }
    }

    /// What the window holds of the budget: all but the minimum every transfer keeps.
    package var reserved: Int { self.size - Self.minimum }
}

/// Which STATUS= line may go out. The line is computed from a snapshot (task counts, the
/// network, a refused reload) on whatever thread asks — the once-a-second reporter, SIGHUP's
/// READY=1, SIGTERM's STOPPING=1 — and two computed at once could otherwise be sent in the
/// wrong order, leaving systemd showing the older one until the next change. Each snapshot takes
/// a ticket before it is read; a line whose ticket is older than one already sent is never sent.
/// `DaemonService` also takes, computes and sends under one lock, so the order holds twice over.
struct StatusSequence: Sendable {
    /// The order in which snapshots were taken.
    struct Ticket: Sendable, Comparable {
        fileprivate let number: UInt64

        static func < (lhs: Ticket, rhs: Ticket) -> Bool { lhs.number < rhs.number }
    }

    private var issued: UInt64 = 0
    private var sent: UInt64 = 0
    /// The last line sent, so that an unchanged one is not sent again by the periodic reporter.
    private(set) var lastText: String?

    /// A ticket for a snapshot about to be read: later than every ticket before it.
    mutating func ticket() -> Ticket {
        self.issued += 1
        return Ticket(number: self.issued)
    }

    /// The line to send for the snapshot of `ticket`, recorded as sent; nil when a newer one was
    /// sent already, or when `onlyIfChanged` and it says what the last one said.
    mutating func admit(_ text: String, ticket: Ticket, onlyIfChanged: Bool) -> String? {
        guard ticket.number > self.sent else { return nil }
        if onlyIfChanged && text == self.lastText { return nil }
        self.sent = ticket.number
        self.lastText = text
        return text
    }
}

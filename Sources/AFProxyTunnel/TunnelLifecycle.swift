import AFProxyModel

/// How a tunnel's two directions close and why it ended, as a plain value: the relay feeds it
/// what each side's channel reports and does what it answers, so the rules are tested without
/// sockets.
///
/// A side's end of input (its peer's half-close) is passed on to the other side as the end of
/// its output; the tunnel is over once both channels closed. The first cause seen is the one
/// the task records: the side that closed first, an error, or a cancel.
package struct TunnelLifecycle: Sendable, Equatable {
    package enum Side: String, Sendable, CaseIterable {
        case client
        case upstream

        package var other: Side { self == .client ? .upstream : .client }
    }

    package enum Action: Sendable, Equatable {
        /// Nothing to do yet.
        case none
        /// Write what is queued for `side`, then shut down its output.
        case passEndOfInput(to: Side)
        /// Write what is queued for `side`, then close it (its partner is gone).
        case close(Side)
        /// Close both sides now (a cancel or an error: queued bytes are dropped).
        case closeBoth
        /// Both channels closed: record `end` and complete the task.
        case finish(TunnelEnd)
    }

    package private(set) var end: TunnelEnd?
    private var inputEnded: Set<Side> = []
    private var closed: Set<Side> = []

    package init() {}

    package var isFinished: Bool { self.closed.count == 2 }

    /// `side`'s peer half-closed: no more bytes come from it.
    package mutating func inputClosed(_ side: Side) -> Action {
        guard !self.closed.contains(side), self.inputEnded.insert(side).inserted else { return .none }
        self.note(TunnelEnd(reason: "\(side.rawValue) closed"))
        return self.closed.contains(side.other) ? .none : .passEndOfInput(to: side.other)
    }

    /// `side`'s channel closed, whoever closed it.
    package mutating func channelClosed(_ side: Side) -> Action {
        guard self.closed.insert(side).inserted else { return .none }
        self.note(TunnelEnd(reason: "\(side.rawValue) closed"))
        if self.closed.count == 2 { return .finish(self.end!) }
        return .close(side.other)
    }

    /// `side`'s channel failed (a reset, a write error): the tunnel cannot go on. A client that
    /// breaks off its connection ends its task as a client that closes an HTTP task's does
    /// ("canceled: …", which the log does not count as a failure); an upstream failure is the
    /// task's error.
    package mutating func failed(_ side: Side, _ message: String) -> Action {
        guard !self.isFinished else { return .none }
        let text = "\(side.rawValue) connection failed: \(message)"
        let failure: TaskFailure = side == .client ? .clientClosed("canceled: \(text)") : .upstreamBroken(text)
        self.note(TunnelEnd(reason: failure.message, failure: failure))
        return .closeBoth
    }

    /// A person canceled the task, its client went away, or the daemon is stopping.
    package mutating func cancel(_ failure: TaskFailure) -> Action {
        guard !self.isFinished else { return .none }
        self.note(TunnelEnd(reason: failure.message, failure: failure))
        return .closeBoth
    }

    /// Neither side sent a byte for `seconds` (see `TunnelIdleTimer`): both close, and the
    /// task ends without an error, as a tunnel that a side closed in order does.
    package mutating func idle(seconds: Int) -> Action {
        guard !self.isFinished else { return .none }
        self.note(TunnelEnd(reason: "closed after \(seconds) s without a byte either way"))
        return .closeBoth
    }

    private mutating func note(_ end: TunnelEnd) {
        if self.end == nil { self.end = end }
    }
}

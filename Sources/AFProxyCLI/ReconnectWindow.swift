/// How long `download --wait` keeps trying while the daemon is away. Download tasks survive a
/// restart with the same id, so a daemon that goes away (`systemctl restart afproxy`, an upgrade)
/// is not the end of the download: the follower polls for up to `limit` seconds from the first
/// failure, then follows the same task again. Until a poll succeeds, "no such task" counts as
/// away too: a restarted daemon answers on its socket a moment before it restores its downloads.
/// A plain value, fed the clock, so the decision is tested without a daemon.
struct ReconnectWindow: Sendable, Equatable {
    /// What to do after a poll that did not reach the task.
    enum Decision: Sendable, Equatable {
        /// Try again after `delay` seconds; `announce`: the first failure, say what is going on.
        case retry(announce: Bool)
        /// The daemon stayed away for the whole window.
        case giveUp
    }

    static let defaultLimit = 15.0
    /// Seconds between attempts: quick enough to catch a restart that takes a second.
    static let delay = 0.25

    let limit: Double
    /// When the current run of failures began; nil while polls succeed.
    private(set) var awaySince: Double?

    init(limit: Double = Self.defaultLimit) {
        self.limit = limit
    }

    /// Whether the daemon went away during this wait (a "no such task" is then no verdict yet).
    var isWaiting: Bool { self.awaySince != nil }

    /// A poll reached the daemon and the task.
    mutating func reached() {
        self.awaySince = nil
    }

    /// A poll could not reach the daemon (refused, no socket, closed before answering) at `now`.
    mutating func failed(now: Double) -> Decision {
        guard let since = self.awaySince else {
            self.awaySince = now
            return .retry(announce: true)
        }
        return now - since < self.limit ? .retry(announce: false) : .giveUp
    }
}

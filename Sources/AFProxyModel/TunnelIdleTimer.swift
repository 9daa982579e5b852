/// When a relaying tunnel has been silent long enough to be closed, as Squid closes a tunnel
/// after `read_timeout`: without it, a tunnel whose client and origin both went quiet (a laptop
/// put to sleep, a dropped network) would hold two sockets and a task until the daemon stops.
///
/// The relay asks every `checkInterval` with the tunnel's byte total and whether it is
/// suspended. A suspended tunnel is never idle: a person decides when it goes on, and its quiet
/// time starts over at the resume.
package struct TunnelIdleTimer: Sendable, Equatable {
    package let limit: Duration
    private var lastTotal: Int64?
    private var quietSince: ContinuousClock.Instant

    package init(limit: Duration, now: ContinuousClock.Instant) {
        self.limit = limit
        self.quietSince = now
    }

    /// Answers true once no byte moved either way for `limit`.
    package mutating func isIdle(total: Int64, suspended: Bool, now: ContinuousClock.Instant) -> Bool {
        if suspended || total != self.lastTotal {
            self.lastTotal = total
            self.quietSince = now
            return false
        }
        return now - self.quietSince >= self.limit
    }

    /// A quarter of the limit, within a quarter of a second and 30 s: a tunnel closes at most a
    /// quarter late, and a long limit costs one timer every 30 s.
    package var checkInterval: Duration {
        min(max(self.limit / 4, .milliseconds(250)), .seconds(30))
    }
}

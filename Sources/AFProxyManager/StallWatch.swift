/// The safety net under the rule at `HTTPTaskStateMachine`: which tasks have had no client and
/// moved no byte for longer than a limit. The rule should end every such task by itself; one the
/// net catches is a defect, ended with `stalled`, logged and counted. A plain value fed the
/// candidates and the time at each sweep, so that what it decides is tested without a clock.
struct StallWatch {
    /// A task without its client, as one sweep saw it.
    struct Candidate: Equatable {
        var id: Int
        /// Bytes moved so far, both ways: any change is progress.
        var bytes: Int64
    }

    private struct Seen {
        var bytes: Int64
        /// When `bytes` was first seen at its value.
        var since: ContinuousClock.Instant
    }

    private var seen: [Int: Seen] = [:]

    /// Answers the ids whose byte count has not moved for longer than `limit` while they had no
    /// client. A task that is no longer a candidate (it ended, or never lost its client) is
    /// forgotten, and so is one the answer names.
    mutating func sweep(_ candidates: [Candidate], now: ContinuousClock.Instant, limit: Duration) -> [Int] {
        var next: [Int: Seen] = [:]
        var stalled: [Int] = []
        for candidate in candidates {
            var entry = Seen(bytes: candidate.bytes, since: now)
            if let before = self.seen[candidate.id], before.bytes == candidate.bytes { entry = before }
            if now - entry.since > limit {
                stalled.append(candidate.id)
            } else {
                next[candidate.id] = entry
            }
        }
        self.seen = next
        return stalled.sorted()
    }

    /// How many tasks are being watched (for tests).
    var watching: Int { self.seen.count }
}

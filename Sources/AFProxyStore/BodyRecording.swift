import AFProxyModel

/// One body being recorded, as a plain value: what of each chunk goes to the file (up to the
/// rule's limit), and when the recording stops keeping bytes (the limit reached, the disk behind
/// by more than `unwrittenLimit` or failing). The task's bytes never wait for the file: a
/// recording that cannot keep up is cut, not the transfer slowed.
package struct BodyRecording: Sendable, Equatable {
    package let limit: Int64
    package private(set) var body: RecordedBody
    /// Bytes handed to the disk and not written yet.
    package private(set) var unwritten: Int64 = 0
    /// Bytes on disk.
    package private(set) var written: Int64 = 0
    /// A write failed: the writes queued after it are dropped (`dropped`), never made. One that
    /// landed anyway (room freed since, by another body's removal or a failed write taken back,
    /// as writes once were) would put bytes that are not the body's after a gap, past its `size`.
    package private(set) var writesFailed = false

    /// What may wait for the disk, per body: beyond it the body is cut rather than held in memory.
    package static let unwrittenLimit: Int64 = 8 << 20

    package init(rule: Int, limit: Int64) {
        self.limit = limit
        self.body = RecordedBody(rule: rule)
    }

    /// `count` bytes passed: answers how many of them, from the first, go to the file.
    package mutating func arrived(_ count: Int) -> Int {
        self.body.seen += Int64(count)
        guard !self.body.cut, count > 0 else { return 0 }
        let keep = min(Int64(count), self.limit - self.body.size)
        guard self.unwritten + keep <= Self.unwrittenLimit else {
            self.cut(by: "disk")
            return 0
        }
        if keep < Int64(count) { self.cut(by: "limit") }
        self.body.size += keep
        self.unwritten += keep
        return Int(keep)
    }

    /// `count` bytes handed over reached the file.
    package mutating func wrote(_ count: Int) {
        self.unwritten -= Int64(count)
        self.written += Int64(count)
    }

    /// A write failed: the file holds what was written before it, and nothing more is kept.
    package mutating func failed(unwritten count: Int) {
        self.unwritten -= Int64(count)
        self.body.size = self.written
        self.writesFailed = true
        self.cut(by: "disk")
    }

    /// A write queued after one that failed was not made.
    package mutating func dropped(_ count: Int) {
        self.unwritten -= Int64(count)
    }

    /// `count` bytes `arrived` kept found no room to wait for the disk (the store's bound across
    /// every body) and were never queued: the body is cut before them, and the writes queued
    /// before still land, so `size` counts those and not these.
    package mutating func refused(_ count: Int) {
        self.unwritten -= Int64(count)
        self.body.size -= Int64(count)
        self.cut(by: "disk")
    }

    /// The body starts again from nothing (a person replaced it at a hold): its file is emptied
    /// after the writes already queued, whose completions then count only as no longer waiting
    /// (`wroteBeforeRestart`).
    package mutating func restart() {
        self.body = RecordedBody(rule: self.body.rule)
        self.written = 0
        self.writesFailed = false
    }

    /// A write queued before `restart` finished (or failed): its bytes no longer wait, and are
    /// not in the file any more.
    package mutating func wroteBeforeRestart(_ count: Int) {
        self.unwritten -= Int64(count)
    }

    /// The store removed the file to keep its total.
    package mutating func removed() {
        self.body.size = 0
        self.cut(by: "total")
    }

    private mutating func cut(by reason: String) {
        guard !self.body.cut else { return }
        self.body.cut = true
        self.body.cutBy = reason
    }
}

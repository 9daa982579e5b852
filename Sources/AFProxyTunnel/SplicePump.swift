/// One direction of a spliced tunnel (`SpliceRelay`) as a plain value: what it knows of its
/// source socket, its pipe and its sink socket, and what to do next. The relay makes the calls
/// it answers and tells it what they returned, so the order of fills, drains, waits and the
/// hand-back to NIO is tested without sockets.
///
/// A fill moves bytes from the source socket into the pipe, a drain from the pipe into the sink
/// socket. The direction ends (`handBack`) only with its pipe empty, so that what NIO writes to
/// the sink afterwards (bytes NIO read itself, the end of input) comes after every spliced byte.
package struct SplicePump: Sendable, Equatable {
    package enum Step: Sendable, Equatable {
        /// Move up to this many bytes from the source into the pipe.
        case fill(Int)
        /// Move up to this many bytes (all the pipe holds) into the sink.
        case drain(Int)
        /// Nothing to do until readiness, a resume or a throttle wake comes (`wantsReadable`,
        /// `wantsWritable` say which readiness).
        case wait
        /// The pipe is empty and the source's input is NIO's again: hand the direction back.
        case handBack
        /// Handed back already, or failed: nothing more.
        case done
    }

    /// What a splice call answered.
    package enum Outcome: Sendable, Equatable {
        case moved(Int)
        /// EAGAIN: the source has nothing, or the sink no room.
        case wouldBlock
        /// 0 from a fill: the source's peer half-closed.
        case endOfInput
    }

    /// How much the pipe holds once full (what `F_SETPIPE_SZ` granted).
    package let capacity: Int
    /// Bytes in the pipe: filled, not yet drained.
    package private(set) var queued = 0
    /// The source may have bytes: no fill has met EAGAIN since the last readiness.
    private var readable = true
    /// The sink may take bytes: no drain has met EAGAIN since the last readiness.
    private var writable = true
    /// No more fills: the source's input ended, or NIO read from it (see `nioTookInput`).
    package private(set) var inputOver = false
    private var finished = false

    package init(capacity: Int) {
        self.capacity = capacity
    }

    /// The next call. `paused`: the task is suspended (no fill; the pipe still drains, as NIO's
    /// queued writes still go out). `throttled`: a throttle bucket is in debt (no fill until its
    /// wake). `grant`: bytes the throttle lets one fill take, nil when unthrottled.
    package mutating func next(paused: Bool, throttled: Bool, grant: Int? = nil) -> Step {
        if self.finished { return .done }
        if self.queued > 0 && self.writable { return .drain(self.queued) }
        if self.mayFill && !paused && !throttled {
            let room = self.capacity - self.queued
            // A grant of 0 still moves a little (in debt, as the NIO path does with a whole read):
            // a fill of 0 bytes would read as the end of input.
            return .fill(min(room, max(grant ?? room, 1)))
        }
        if self.queued == 0 && self.inputOver {
            self.finished = true
            return .handBack
        }
        return .wait
    }

    private var mayFill: Bool { !self.inputOver && self.readable && self.queued < self.capacity }

    /// Readiness to ask the watcher for: the source's, while a fill waits for it.
    package var wantsReadable: Bool {
        !self.finished && !self.inputOver && !self.readable && self.queued < self.capacity
    }
    /// The sink's, while a drain waits for it.
    package var wantsWritable: Bool { !self.finished && self.queued > 0 && !self.writable }

    package mutating func filled(_ outcome: Outcome) {
        switch outcome {
        case .moved(let count): self.queued += count
        case .wouldBlock: self.readable = false
        case .endOfInput: self.inputOver = true
        }
    }

    package mutating func drained(_ outcome: Outcome) {
        switch outcome {
        case .moved(let count): self.queued -= count
        case .wouldBlock, .endOfInput: self.writable = false
        }
    }

    package mutating func becameReadable() { self.readable = true }
    package mutating func becameWritable() { self.writable = true }

    /// NIO read from the source (what it reads at a half-close whatever `read()` said) or the
    /// splice is not possible on it: its input is NIO's from now on, behind what the pipe holds.
    package mutating func nioTookInput() {
        self.inputOver = true
    }

    /// The tunnel closes: nothing more is done.
    package mutating func stop() {
        self.finished = true
    }
}

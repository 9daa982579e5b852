/// The rate of a transfer over its last few seconds, from (time, bytes) samples, and the time
/// left at that rate. `list` shows the average since the task started, which is right for a
/// short transfer; `download --wait` follows one long transfer that stalls, retries and resumes,
/// and an average over its whole life would hide that it stalls now, or promise an ETA from a
/// speed it no longer has.
struct TransferRate {
    /// Seconds of samples the rate is taken over.
    var window: Double = 5
    /// Below this span the rate is noise (two polls a few milliseconds apart).
    var shortest: Double = 0.5
    private var samples: [(time: Double, bytes: Int64)] = []

    init(window: Double = 5, shortest: Double = 0.5) {
        self.window = window
        self.shortest = shortest
    }

    /// `time` in seconds on a monotonic clock, `bytes` the bytes so far.
    mutating func add(time: Double, bytes: Int64) {
        // Fewer bytes than before: the download started again from 0. Its old speed says
        // nothing about the new attempt's.
        if let last = self.samples.last, bytes < last.bytes || time < last.time { self.samples.removeAll() }
        self.samples.append((time, bytes))
        // Keep one sample at or before the window's start, so the window stays whole.
        while self.samples.count > 2, self.samples[1].time <= time - self.window { self.samples.removeFirst() }
    }

    /// Bytes a second over the window; nil until the samples span `shortest`. Zero when nothing
    /// moved in the window: a stalled download shows no rate rather than its old one.
    var bytesPerSecond: Double? {
        guard let first = self.samples.first, let last = self.samples.last, last.time - first.time >= self.shortest
        else { return nil }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }

    /// Seconds until `total` at the current rate; nil when either is unknown or nothing moves.
    func secondsLeft(total: Int64?) -> Double? {
        guard let total, let rate = self.bytesPerSecond, rate > 0, let last = self.samples.last else { return nil }
        return Double(max(0, total - last.bytes)) / rate
    }
}

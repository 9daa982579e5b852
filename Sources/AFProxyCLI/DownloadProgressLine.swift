import AFProxyAPI

/// `download --wait`'s progress: on a terminal one line redrawn in place, fitted to its width;
/// piped, the same figures as plain text, a line each time. A value with no I/O, so that the
/// layout is tested at any width.
struct DownloadProgressLine: Equatable {
    var progress: TransferProgress
    var bytesPerSecond: Double?
    var secondsLeft: Double?
    /// Why no bytes move now (`queued`, `retrying in 4 s (…)`, `suspended`): shown in place of
    /// the rate and ETA, which say nothing then.
    var waiting: String?

    /// The widest a bar gets: wider says no more, and a bar across a wide terminal reads as a rule.
    static let widestBar = 30
    /// Narrower than this, the bar is left out: the figures matter more.
    static let narrowestBar = 5

    init(progress: TransferProgress, bytesPerSecond: Double?, secondsLeft: Double?, waiting: String?) {
        self.progress = progress
        self.bytesPerSecond = bytesPerSecond
        self.secondsLeft = secondsLeft
        self.waiting = waiting
    }

    /// A suspended download has no `waiting` reason from the daemon, but is waiting all the same.
    init(task: TaskRecord, rate: TransferRate) {
        let total = task.download.total
        self.init(
            progress: task.download, bytesPerSecond: rate.bytesPerSecond, secondsLeft: rate.secondsLeft(total: total),
            waiting: task.waiting ?? (task.state == .suspended ? "suspended" : nil))
    }

    /// The line for a terminal `width` columns wide; it stays out of the last column, where a
    /// character makes some terminals wrap and the redraw then lands on the line below.
    func terminal(width: Int) -> String {
        let room = max(1, width - 1)
        // Fields padded to their widest, so that the bar keeps its length as the figures change.
        let done = Self.leftPadded(Formatting.bytes(self.progress.completed), 10)
        let speed = Self.leftPadded(Formatting.rate(self.bytesPerSecond), 12)
        var line: String
        if let fraction = self.progress.fraction, let total = self.progress.total {
            let percent = Self.leftPadded("\(Int((fraction * 100).rounded(.down)))%", 4)
            let figures = "\(percent)  \(done) / \(Formatting.bytes(total))  "
            let eta = "ETA " + Formatting.duration(self.secondsLeft)
            let barWidth = min(Self.widestBar, room - figures.count - speed.count - "  ETA 59m59s".count - 3)
            if barWidth >= Self.narrowestBar {
                let filled = Int((fraction * Double(barWidth)).rounded(.down))
                line =
                    "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled)
                    + "] "
            } else {
                line = ""
            }
            line += figures + (self.waiting ?? "\(speed)  \(eta)")
        } else {
            line = "\(done)  " + (self.waiting ?? speed)
        }
        guard line.count > room else { return line }
        return String(line.prefix(room - 1)) + "…"
    }

    /// One line for a log or a pipe: no padding, no bar.
    var plain: String {
        let done = Formatting.bytes(self.progress.completed)
        let speed = Formatting.rate(self.bytesPerSecond)
        guard let fraction = self.progress.fraction, let total = self.progress.total else {
            return "\(done)  " + (self.waiting ?? speed)
        }
        let percent = "\(Int((fraction * 100).rounded(.down)))%"
        return "\(percent)  \(done) / \(Formatting.bytes(total))  "
            + (self.waiting ?? "\(speed)  ETA \(Formatting.duration(self.secondsLeft))")
    }

    private static func leftPadded(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}

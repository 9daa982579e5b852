import AFProxyAPI
import FoundationEssentials

/// How afproxyctl shows figures: sizes in binary units, durations short, progress as a bar on a
/// terminal and as plain text when piped.
enum Formatting {
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : "\(Self.decimal(value, 1)) \(units[unit])"
    }

    static func rate(_ bytesPerSecond: Double?) -> String {
        guard let bytesPerSecond, bytesPerSecond > 0 else { return "-" }
        return Self.bytes(Int64(bytesPerSecond)) + "/s"
    }

    static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "-" }
        if seconds < 60 { return "\(Int(seconds))s" }
        if seconds < 3600 { return "\(Int(seconds) / 60)m\(Int(seconds) % 60)s" }
        return "\(Int(seconds) / 3600)h\(Int(seconds) % 3600 / 60)m"
    }

    static func milliseconds(_ value: Double?) -> String {
        value.map { "\(Self.decimal($0, 2)) ms" } ?? "-"
    }

    static func decimal(_ value: Double, _ places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = "\(rounded)"
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if decimals < places { text += String(repeating: "0", count: places - decimals) }
        }
        return text
    }

    /// The direction that matters for the task: download, unless it is an upload still sending
    /// (with no answer yet, or an answer that came before the body ended: its length is then
    /// still unknown, or short of the total).
    static func mainProgress(_ task: TaskRow) -> TransferProgress {
        guard task.kind == .upload else { return task.download }
        let sending = task.upload.total.map { task.upload.completed < $0 } ?? true
        return task.status == nil || sending ? task.upload : task.download
    }

    static func mainProgress(_ task: TaskRecord) -> TransferProgress {
        Self.mainProgress(TaskRow(task))
    }

    /// `[#####.....]  50%` on a terminal, `50%` piped; a byte count when the total is unknown.
    static func progress(_ progress: TransferProgress, terminal: Bool) -> String {
        guard let fraction = progress.fraction, let total = progress.total, total > 0 else {
            return Self.bytes(progress.completed)
        }
        let percent = "\(Int((fraction * 100).rounded(.down)))%"
        guard terminal else { return percent }
        let width = 12
        let filled = Int((fraction * Double(width)).rounded(.down))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            + String(repeating: " ", count: max(0, 4 - percent.count)) + percent
    }

    /// Average rate since the task started, and the time left at that rate.
    static func rateAndETA(_ task: TaskRow, now: Date) -> (Double?, Double?) {
        let age = now.timeIntervalSince(task.createdAt)
        let progress = Self.mainProgress(task)
        guard task.state != .completed, age > 0.2, progress.completed > 0 else { return (nil, nil) }
        let rate = Double(progress.completed) / age
        guard let total = progress.total, total > progress.completed else { return (rate, nil) }
        return (rate, Double(total - progress.completed) / rate)
    }

    static func color(_ state: TaskState, _ text: String, terminal: Bool) -> String {
        guard terminal else { return text }
        let code: String
        switch state {
        case .running: code = "32"
        case .suspended: code = "33"
        case .canceling: code = "35"
        case .completed: code = "2"
        }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }
}

extension String {
    var trimmedSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return String(view)
    }
}

extension Substring {
    var trimmedSpaces: String { String(self).trimmedSpaces }
}

import AFProxyAPI
import FoundationEssentials

/// The lines `show` adds for a task that waits, resumed or has a file: a download's path, its
/// attempts and why it started again, so that a person sees what the daemon did between two polls.
extension TaskDetail {
    static func downloadLines(_ task: TaskRecord) -> [String] {
        var lines: [String] = []
        if let waiting = task.waiting { lines.append("  waiting    \(waiting)") }
        if let file = task.file {
            lines.append("  file       \(file.path)")
            lines.append(
                "  partial    \(file.partialPath) (\(file.keepPartial ? "kept" : "removed") if canceled or failed)")
            lines.append("  sha256     \(file.sha256 ?? "- (not checked)")")
            if file.insecure { lines.append("  tls        INSECURE: the origin's certificate is not verified") }
            if let pins = file.pins { lines.append("  pins       \(pins.joined(separator: " "))") }
            lines.append("  attempt    \(file.attempt) of \(file.maxAttempts)")
            if let error = file.lastError { lines.append("  last error \(error)") }
        }
        if !task.resumes.isEmpty {
            lines.append("  resumed at offset")
            for resume in task.resumes {
                lines.append(
                    "    \(resume.at.formatted(.iso8601))  \(resume.offset) B (\(Formatting.bytes(resume.offset)))")
            }
        }
        if let restarts = task.file?.restarts, !restarts.isEmpty {
            lines.append("  started again from 0")
            for restart in restarts { lines.append("    \(restart.at.formatted(.iso8601))  \(restart.reason)") }
        }
        return lines
    }
}

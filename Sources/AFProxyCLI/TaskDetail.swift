import AFProxyAPI
import FoundationEssentials

/// The `show` view: every field of a task, and its metrics as a timeline from the start of the
/// transfer (DNS → connect → TLS → first byte → total).
struct TaskDetail {
    var task: TaskRecord
    var terminal: Bool

    func render() -> String {
        let task = self.task
        var lines: [String] = []
        lines.append(
            "task \(task.id)  \(task.kind.rawValue)  \(Formatting.color(task.state, task.state.rawValue, terminal: self.terminal))"
        )
        lines.append("  \(task.method) \(task.url)")
        lines.append("  client     \(task.client)")
        if let user = task.proxyUser { lines.append("  user       \(user)") }  // proxy authentication
        lines += Self.processLines(task.clientProcess)
        lines.append("  created    \(task.createdAt.formatted(.iso8601))")
        lines.append("  status     \(task.status.map(String.init) ?? "-")")
        lines.append("  error      \(task.error ?? "-")")
        if let rule = task.heldBy {
            lines.append(
                "  held       by rule \(rule) (edit changes it, resume lets it go, respond answers it, cancel answers 503)"
            )
        }
        if let original = task.replayOf { lines.append("  replay     of task \(original)") }
        for (index, edit) in task.edits.enumerated() {
            lines.append("  \(index == 0 ? "edits " : "      ")     \(edit.side.rawValue): \(edit.change)")
        }
        if let reason = task.endReason { lines.append("  ended      \(reason)") }  // tunnels
        if let relay = task.relay {
            lines.append("  relay      " + (relay == .splice ? "splice (in the kernel)" : "nio"))
        }
        if let parent = task.parent {
            let speaking = task.clientHTTPVersion.map { ", the client speaking HTTP/\($0)" } ?? ""
            lines.append("  inside     intercepted connection, stream task \(parent)\(speaking)")
        }
        if let requests = task.requests {
            lines.append("  intercepted  \(requests) request\(requests == 1 ? "" : "s") inside, each a task of its own")
        }
        lines.append("  upload     \(Self.progress(task.upload))")
        lines.append("  download   \(Self.progress(task.download))")
        lines += Self.downloadLines(task)
        if task.limit != nil { lines.append("  limit      \(ThrottleText.detail(task.limit))") }
        let metrics = task.metrics
        lines.append(
            "  remote     \(metrics.remoteAddress ?? "-")  HTTP/\(metrics.httpVersion ?? "-")  "
                + (metrics.reusedConnection.map { $0 ? "reused connection" : "new connection" } ?? ""))
        lines.append("  timeline")
        let phases: [(String, Double?)] = [
            ("dns", metrics.dnsMs), ("connect", metrics.connectMs), ("tls", metrics.tlsMs),
            ("first byte", metrics.ttfbMs), ("total", metrics.totalMs),
        ]
        let scale = max(metrics.totalMs ?? 0, phases.compactMap(\.1).max() ?? 0)
        for (name, value) in phases {
            let bar: String
            if let value, scale > 0 {
                bar = String(repeating: "=", count: max(1, Int(value / scale * 30)))
            } else {
                bar = ""
            }
            lines.append("    " + name.padding(10) + Formatting.milliseconds(value).padding(12) + bar)
        }
        lines.append("  request headers")
        for field in task.requestHeaders { lines.append("    \(field.name): \(field.value)") }
        if let response = task.responseHeaders {
            lines.append("  response headers")
            for field in response { lines.append("    \(field.name): \(field.value)") }
        }
        return lines.joined(separator: "\n")
    }

    private static func progress(_ progress: TransferProgress) -> String {
        let total = progress.total.map { " of \(Formatting.bytes($0))" } ?? " (total unknown)"
        let percent = progress.fraction.map { " (\(Int($0 * 100))%)" } ?? ""
        return Formatting.bytes(progress.completed) + total + percent
    }
}

extension String {
    func padding(_ width: Int) -> String {
        self.count >= width ? self + " " : self + String(repeating: " ", count: width - self.count)
    }
}

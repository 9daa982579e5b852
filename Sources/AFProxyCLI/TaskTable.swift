import FoundationEssentials

/// The `list` table: ID KIND STATE METHOD URL STATUS PROGRESS RATE ETA AGE, columns aligned; on
/// a terminal with colour for states and a progress bar. A task that waits (`queued`, `retrying in
/// 4 s (…)`) shows why in the RATE column: its average rate says nothing while it moves no bytes.
/// A download with TLS verification off (`--insecure`) is `download!`.
struct TaskTable {
    static let columns = ["ID", "KIND", "STATE", "METHOD", "URL", "STATUS", "PROGRESS", "RATE", "ETA", "AGE"]

    var tasks: [TaskRow]
    var terminal: Bool
    var now: Date
    var urlWidth = 60
    /// A retry's reason holds the last error, which can be long; `show` has all of it.
    var waitingWidth = 50
    /// The terminal's columns: the PROCESS column is shown only if the table then fits (nil: not a
    /// terminal, no PROCESS column).
    var width: Int? = nil

    func render() -> String {
        // LIMIT only when some task has a throttle rule: most lists have none.
        let limited = self.tasks.contains { $0.limit != nil }
        var rows: [[String]] = [limited ? Self.columns + ["LIMIT"] : Self.columns]
        for task in self.tasks {
            let (rate, eta) = Formatting.rateAndETA(task, now: self.now)
            var url = task.url
            if url.count > self.urlWidth { url = String(url.prefix(self.urlWidth - 1)) + "…" }
            var waiting = task.waiting ?? task.heldBy.map { "held by rule \($0)" }
            if let text = waiting, text.count > self.waitingWidth {
                waiting = String(text.prefix(self.waitingWidth - 1)) + "…"
            }
            // A download that skips TLS verification says so wherever it is listed.
            let kind = task.insecure ? "\(task.kind.rawValue)!" : task.kind.rawValue
            rows.append(
                [
                    String(task.id), kind, task.state.rawValue, task.method, url,
                    task.status.map(String.init) ?? (task.error == nil ? "-" : "ERR"),
                    Formatting.progress(Formatting.mainProgress(task), terminal: self.terminal),
                    waiting ?? Formatting.rate(rate), waiting == nil ? Formatting.duration(eta) : "-",
                    Formatting.duration(self.now.timeIntervalSince(task.createdAt)),
                ] + (limited ? [ThrottleText.column(task.limit)] : []))
        }
        self.addProcessColumn(to: &rows)
        var widths = [Int](repeating: 0, count: rows[0].count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var lines: [String] = []
        for (rowIndex, row) in rows.enumerated() {
            var cells: [String] = []
            for (index, cell) in row.enumerated() {
                let padded =
                    index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
                if index == 2, rowIndex > 0 {
                    cells.append(Formatting.color(self.tasks[rowIndex - 1].state, padded, terminal: self.terminal))
                } else {
                    cells.append(padded)
                }
            }
            lines.append(cells.joined(separator: "  "))
        }
        return lines.joined(separator: "\n")
    }
}

import AFProxyAPI

#if canImport(Glibc)
import Glibc
#endif

extension TaskTable {
    /// PROCESS, last: `curl[12345]`, or the user alone when only the socket's owner is known.
    /// Only on a terminal, when some task has a client process and the table still fits the
    /// terminal's width with it (the URL column matters more). Piped, the table keeps the columns
    /// scripts read; `--json` has the process.
    func addProcessColumn(to rows: inout [[String]]) {
        guard let width = self.width, self.tasks.contains(where: { $0.clientProcess != nil }) else { return }
        let cells = self.tasks.map { $0.clientProcess?.label ?? "-" }
        var widths = rows[0].map(\.count)
        for row in rows.dropFirst() {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        let process = max("PROCESS".count, cells.map(\.count).max() ?? 0)
        guard widths.reduce(0, +) + process + 2 * widths.count <= width else { return }
        rows[0].append("PROCESS")
        for (index, cell) in cells.enumerated() { rows[index + 1].append(cell) }
    }

    /// The columns of the terminal on standard output; nil when it is not one.
    static func terminalWidth() -> Int? {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

/// `list --process NAME`, `--unit UNIT` and `--capture NAME|ID`: which tasks they keep.
struct ProcessFilter: Equatable {
    var process: String?
    var unit: String?
    var capture: String? = nil

    var isEmpty: Bool { self.process == nil && self.unit == nil && self.capture == nil }

    /// A task whose client process is not known matches none.
    func matches(_ client: ClientProcess?) -> Bool {
        if let process = self.process, client?.name != process { return false }
        // `nginx` names nginx.service, as it does to systemctl.
        if let unit = self.unit, client?.unit != unit, client?.unit != "\(unit).service" { return false }
        if let capture = self.capture {
            guard let label = client?.capture,
                label.name == capture || label.name == "\(capture).service" || String(label.id) == capture
            else {
                return false
            }
        }
        return true
    }

    func matches(_ task: TaskRow) -> Bool { self.matches(task.clientProcess) }

    /// `list --json` filters whole records.
    func matches(_ task: TaskRecord) -> Bool { self.matches(task.clientProcess) }
}

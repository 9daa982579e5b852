import AFProxyAPI

extension TaskDetail {
    /// `process    curl[1234] /usr/bin/curl`, then its user, unit, capture and command line; nothing when
    /// the client's process is not known.
    static func processLines(_ process: ClientProcess?) -> [String] {
        guard let process else { return [] }
        var lines = [
            "  process    " + ([process.label] + [process.executable].compactMap { $0 }).joined(separator: " ")
        ]
        let user = process.user.map { name in process.uid.map { "\(name) (\($0))" } ?? name }
        lines.append("  user       " + (user ?? process.uid.map(String.init) ?? "-"))
        if let unit = process.unit { lines.append("  unit       \(unit)") }
        if let capture = process.capture {
            let source = process.unit == capture.name ? "afproxyctl capture" : "afproxyctl run"
            lines.append("  capture    \(capture.name) (\(source), #\(capture.id))")
        }
        if let command = process.commandLine { lines.append("  command    \(command)") }
        return lines
    }
}

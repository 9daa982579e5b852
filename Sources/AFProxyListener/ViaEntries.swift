/// The `received-by` names of a `Via` field value (RFC 9110 §7.6.3), for loop detection.
///
/// `Via` is a comma-separated list of `received-protocol RWS received-by [RWS comment]`. A loop
/// is an entry whose received-by is our own name; the name merely appearing somewhere in the
/// value (another proxy's host name, a comment, a protocol) is no loop, which matters once the
/// name is short: with `--via-name a`, a plain substring match refused every request that had
/// passed through any proxy whose name holds an `a`.
package enum ViaEntries {
    /// The received-by of each entry of `value`, in order; commas and text inside comments
    /// (parenthesised, nesting, with `\` quoted pairs) are skipped, empty list elements and
    /// entries without a received-by are left out.
    package static func receivedBy(_ value: String) -> [Substring] {
        var names: [Substring] = []
        for entry in Self.entries(value) {
            let words = entry.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if words.count >= 2 { names.append(words[1]) }
        }
        return names
    }

    /// Whether one entry of `value` was received by `name` (compared ignoring case, as host
    /// names and pseudonyms are).
    package static func contains(_ value: String, receivedBy name: String) -> Bool {
        let wanted = name.lowercased()
        return Self.receivedBy(value).contains { $0.lowercased() == wanted }
    }

    /// The list elements of `value` with their comments replaced by a space.
    private static func entries(_ value: String) -> [String] {
        var entries: [String] = []
        var current = ""
        var depth = 0
        var escaped = false
        for character in value {
            if depth > 0 {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "(" {
                    depth += 1
                } else if character == ")" {
                    depth -= 1
                    if depth == 0 { current.append(" ") }
                }
                continue
            }
            switch character {
            case "(": depth = 1
            case ",":
                entries.append(current)
                current = ""
            default: current.append(character)
            }
        }
        entries.append(current)
        return entries
    }
}

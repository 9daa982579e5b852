import AFProxyModel

/// The file name a `Content-Disposition` answer suggests (RFC 6266): `filename*=UTF-8''…`
/// (percent-encoded) before `filename="…"`, reduced to a plain name in one directory: no path,
/// no `.` or `..`, no control bytes. Nil when it suggests none that is usable.
package enum ContentDisposition {
    package static func fileName(_ value: String) -> String? {
        var plain: String?
        var extended: String?
        for part in Self.parameters(value) {
            guard let equals = part.firstIndex(of: "=") else { continue }
            let name = part[..<equals].trimmingSpaces().lowercased()
            var text = part[part.index(after: equals)...].trimmingSpaces()
            if name == "filename*" {
                // charset'language'percent-encoded
                let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                guard pieces.count == 3, pieces[0].lowercased() == "utf-8" else { continue }
                extended = PercentDecoding.decode(pieces[2])
            } else if name == "filename" {
                if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 {
                    text = text.dropFirst().dropLast()
                }
                // quoted-pair: a backslash takes the next character as it is.
                var unquoted = ""
                var escaped = false
                for character in text {
                    if character == "\\" && !escaped {
                        escaped = true
                        continue
                    }
                    escaped = false
                    unquoted.append(character)
                }
                plain = unquoted
            }
        }
        guard let chosen = extended ?? plain else { return nil }
        // Only the last path segment, whichever separator the origin used.
        let base = chosen.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        guard !base.isEmpty, base != ".", base != "..", base.utf8.count <= 255,
            !base.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else { return nil }
        return base
    }

    /// The `;`-separated parameters after the disposition type, quotes respected.
    private static func parameters(_ value: String) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var index = value.startIndex
        while index < value.endIndex {
            let character = value[index]
            if character == "\"" { quoted.toggle() }
            if character == ";" && !quoted {
                parts.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        parts.append(value[start...])
        return Array(parts.dropFirst())
    }

}

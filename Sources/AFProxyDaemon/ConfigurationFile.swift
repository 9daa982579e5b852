/// The config file: one `key = value` a line, `#` starts a comment, keys as the long flags
/// (`max-connections = 512`); `listen` may repeat. Line-oriented like tinyproxy's, so that the
/// annotated example reads as documentation and an error names its line.
package enum ConfigurationFile {
    package static func apply(
        _ text: String, path: String, to configuration: inout DaemonConfiguration
    ) throws(ConfigurationError) {
        var listens: [String] = []
        // `\r\n` is one Character, which a split at "\n" never finds: a file saved on Windows
        // read as one long line.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let place = "\(path):\(index + 1)"
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let content = String(line).trimmed
            if content.isEmpty { continue }
            guard let equals = content.firstIndex(of: "=") else {
                throw ConfigurationError("expected key = value, got \(content.prefix(60))", place: place)
            }
            let name = String(content[..<equals]).trimmed
            var value = String(content[content.index(after: equals)...]).trimmed
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard let key = DaemonConfiguration.key(named: name) else {
                throw ConfigurationError("unknown key \(name)", place: place)
            }
            do {
                if name == "listen" {
                    _ = try ListenAddress.parse(value)
                    listens.append(value)
                } else {
                    try key.apply(&configuration, value)
                }
            } catch {
                throw ConfigurationError("\(name): \(error.message)", place: place)
            }
        }
        if !listens.isEmpty { configuration.listen = listens }
    }

    package static func applyEnvironment(
        _ environment: [String: String], to configuration: inout DaemonConfiguration
    ) throws(ConfigurationError) {
        for key in DaemonConfiguration.keys {
            guard let value = environment[key.environment], !value.isEmpty else { continue }
            do {
                try key.apply(&configuration, value)
            } catch {
                throw ConfigurationError("\(error.message)", place: "environment variable \(key.environment)")
            }
        }
    }
}

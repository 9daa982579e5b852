import CSystemd
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler that writes each entry to the journal with `sd_journal_sendv`: MESSAGE,
/// PRIORITY, SYSLOG_IDENTIFIER, CODE_FILE/CODE_LINE/CODE_FUNC, and one field per metadata key
/// (`task_id` becomes `AFPROXY_TASK_ID`), so that `journalctl AFPROXY_STATUS=502` finds entries.
/// Without a journal socket `sd_journal_sendv` drops the entry and the call costs one failed
/// send.
package struct JournalLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package var logLevel: Logger.Level = .info
    private let identifier: String

    package init(identifier: String = "afproxy", metadataProvider: Logger.MetadataProvider? = nil) {
        self.identifier = identifier
        self.metadataProvider = metadataProvider
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var metadata = self.metadata
        if let provided = self.metadataProvider?.get() { metadata.merge(provided) { _, new in new } }
        if let given = event.metadata { metadata.merge(given) { _, new in new } }
        if let error = event.error { metadata["error"] = "\(error)" }
        let fields = JournalEntry.fields(
            level: event.level, message: event.message.description, metadata: metadata,
            identifier: self.identifier, file: event.file, function: event.function, line: event.line)
        JournalEntry.send(fields)
    }

    /// True when the journal's socket exists (journald runs, or a test listens there).
    package static var socketPresent: Bool {
        var info = stat()
        return stat(JournalEntry.socketPath, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
    }

    /// True when `JOURNAL_STREAM` names this process's stderr: systemd connected stderr to the
    /// journal, so lines written there would be logged a second time, without fields.
    package static func stderrIsJournal(environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}

/// The fields of one journal entry, and how they are sent.
package enum JournalEntry {
    package static let socketPath = "/run/systemd/journal/socket"
    /// Metadata keys become fields under this prefix.
    package static let fieldPrefix = "AFPROXY_"

    package static func fields(
        level: Logger.Level, message: String, metadata: Logger.Metadata, identifier: String,
        file: String, function: String, line: UInt
    ) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [
            ("MESSAGE", message),
            ("PRIORITY", String(Self.priority(level))),
            ("SYSLOG_IDENTIFIER", identifier),
            ("CODE_FILE", file),
            ("CODE_LINE", String(line)),
            ("CODE_FUNC", function),
        ]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            guard let name = Self.fieldName(forMetadataKey: key) else { continue }
            fields.append((name, Self.text(value)))
        }
        return fields
    }

    /// syslog priorities: trace and debug 7, info 6, notice 5, warning 4, error 3, critical 2.
    package static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// `task_id` → `AFPROXY_TASK_ID`: upper case, anything but A-Z and 0-9 as `_`, the prefix
    /// added unless present, at most 64 characters (journald's limit). Nil for an empty key.
    package static func fieldName(forMetadataKey key: String) -> String? {
        var name = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "a"..."z": name.unicodeScalars.append(Unicode.Scalar(scalar.value - 32)!)
            case "A"..."Z", "0"..."9": name.unicodeScalars.append(scalar)
            default: name.append("_")
            }
        }
        guard !name.isEmpty else { return nil }
        if !name.hasPrefix(Self.fieldPrefix) { name = Self.fieldPrefix + name }
        return String(name.prefix(64))
    }

    static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        default: value.description
        }
    }

    /// One `FIELD=value` iovec each; libsystemd picks the binary framing for values with newlines.
    static func send(_ fields: [(name: String, value: String)]) {
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = bytes.count
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(UInt8(ascii: "="))
            bytes.append(contentsOf: field.value.utf8)
            ranges.append(start..<bytes.count)
        }
        bytes.withUnsafeMutableBytes { buffer in
            let base = buffer.baseAddress!
            let vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            _ = vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, CInt($0.count)) }
        }
    }
}

import AFProxyModel
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Readable lines on stderr: time, level, label, message. Metadata is left out: it is the
/// journal's structured fields, and every message that carries some says the same in words.
///
/// One `write` per line, so that lines from several threads never interleave — except inside
/// `batched(_:)`, where the lines of that task gather and go out in one write at its end: the
/// completed-task log writes hundreds of lines at a time, and a write per line to a file cost a
/// system call per request, which showed in the daemon's CPU under load.
struct StderrLogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    @TaskLocal private static var batch: LineBatch?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = "\(Self.timestamp()) \(event.level) \(self.label): \(event.message)"
        if let error = event.error { line += " (\(error))" }
        line += "\n"
        if let batch = Self.batch {
            batch.append(line)
        } else {
            Self.write(line)
        }
    }

    /// Runs `body`; what this handler logs from it (on the same task) is written once, at the end.
    static func batched(_ body: () -> Void) {
        let batch = LineBatch()
        Self.$batch.withValue(batch) { body() }
        let text = batch.take()
        if !text.isEmpty { Self.write(text) }
    }

    private static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Local time to the second, with the UTC offset: `2026-11-21T20:18:50+0000`. Formatted
    /// once per second, not per line.
    static func timestamp() -> String {
        let now = time(nil)
        return Self.lastTimestamp.withLock { last in
            if last.second == now { return last.text }
            var parts = tm()
            var copy = now
            localtime_r(&copy, &parts)
            var buffer = [CChar](repeating: 0, count: 32)
            let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
            let text = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            last = (now, text)
            return text
        }
    }

    private static let lastTimestamp = Locked<(second: time_t, text: String)>((-1, ""))
}

/// Lines gathered by `StderrLogHandler.batched(_:)`.
private final class LineBatch: Sendable {
    private let text = Locked("")

    func append(_ line: String) { self.text.withLock { $0 += line } }

    func take() -> String {
        self.text.withLock { text in
            defer { text = "" }; return text
        }
    }
}

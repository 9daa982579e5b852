import AFProxyModel
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Task records written as JSON by hand, byte for byte what the control API's `JSONEncoder`
/// (sorted keys, ISO 8601 dates, slashes unescaped) makes of them, which a test checks.
/// `GET /v1/tasks` with 2,000 live tasks took 200–260 ms to encode through `Codable`, most of it
/// in the encoder's boxing of every value; the list is what `afproxyctl list` and `watch` poll.
extension TaskRecord {
    package func writeJSON(to out: inout [UInt8]) {
        var json = JSONWriter(out: out)
        defer { out = json.out }
        json.open("{")
        json.key("bodies"); json.recordedBodies(self.bodies)
        json.key("client"); json.string(self.client)
        json.key("clientHTTPVersion"); json.string(self.clientHTTPVersion)
        json.key("clientProcess"); json.clientProcess(self.clientProcess)
        json.key("createdAt"); json.date(self.createdAt)
        json.key("download"); json.progress(self.download)
        json.key("edits"); json.edits(self.edits)
        json.key("endReason"); json.string(self.endReason)
        json.key("error"); json.string(self.error)
        json.key("errorCode"); json.string(self.errorCode)
        json.key("file"); json.file(self.file)
        json.key("heldBy"); json.integer(self.heldBy.map(Int64.init))
        json.key("id"); json.integer(Int64(self.id))
        json.key("kind"); json.string(self.kind.rawValue)
        json.key("limit"); json.limit(self.limit)
        json.key("method"); json.string(self.method)
        json.key("metrics"); json.metrics(self.metrics)
        json.key("parent"); json.integer(self.parent.map(Int64.init))
        json.key("proxyUser"); json.string(self.proxyUser)
        json.key("relay"); json.string(self.relay?.rawValue)
        json.key("replayOf"); json.integer(self.replayOf.map(Int64.init))
        json.key("requestHeaders"); json.headers(self.requestHeaders)
        json.key("requests"); json.integer(self.requests.map(Int64.init))
        json.key("responseHeaders"); json.headers(self.responseHeaders)
        json.key("resumes"); json.resumes(self.resumes)
        json.key("state"); json.string(self.state.rawValue)
        json.key("status"); json.integer(self.status.map(Int64.init))
        json.key("upload"); json.progress(self.upload)
        json.key("url"); json.string(self.url)
        json.key("waiting"); json.string(self.waiting)
        json.close("}")
    }
}

extension TaskList {
    /// `{"tasks":[…]}`, as `writeJSON` writes each record.
    package func writeJSON(to out: inout [UInt8]) {
        out.append(contentsOf: #"{"tasks":["#.utf8)
        for (index, task) in self.tasks.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            task.writeJSON(to: &out)
        }
        out.append(contentsOf: "]}".utf8)
    }
}

/// The few JSON shapes a task record has.
struct JSONWriter {
    var out: [UInt8]
    private var first = true

    init(out: [UInt8]) {
        self.out = out
    }

    mutating func open(_ bracket: Unicode.Scalar) {
        self.out.append(UInt8(ascii: bracket))
        self.first = true
    }

    mutating func close(_ bracket: Unicode.Scalar) {
        self.out.append(UInt8(ascii: bracket))
        self.first = false
    }

    mutating func key(_ name: StaticString) {
        if !self.first { self.out.append(UInt8(ascii: ",")) }
        self.first = false
        self.out.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { self.out.append(contentsOf: $0) }
        self.out.append(contentsOf: "\":".utf8)
    }

    mutating func null() {
        self.out.append(contentsOf: "null".utf8)
    }

    mutating func string(_ value: String?) {
        guard var value else { return self.null() }
        self.out.append(UInt8(ascii: "\""))
        value.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                self.out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): self.out.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): self.out.append(contentsOf: #"\\"#.utf8)
                case 0x08: self.out.append(contentsOf: #"\b"#.utf8)
                case 0x0C: self.out.append(contentsOf: #"\f"#.utf8)
                case 0x0A: self.out.append(contentsOf: #"\n"#.utf8)
                case 0x0D: self.out.append(contentsOf: #"\r"#.utf8)
                case 0x09: self.out.append(contentsOf: #"\t"#.utf8)
                default:
                    let (high, low) = byte.hexDigits
                    self.out.append(contentsOf: #"\u00"#.utf8)
                    self.out.append(high)
                    self.out.append(low)
                }
            }
            self.out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        self.out.append(UInt8(ascii: "\""))
    }

    mutating func integer(_ value: Int64?) {
        guard let value else { return self.null() }
        self.out.append(contentsOf: String(value).utf8)
    }

    mutating func bool(_ value: Bool?) {
        guard let value else { return self.null() }
        self.out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// The shortest representation that reads back the same, as the encoder writes it
    /// (`5` rather than `5.0`).
    mutating func double(_ value: Double?) {
        guard let value else { return self.null() }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        self.out.append(contentsOf: text.utf8)
    }

    /// ISO 8601 in UTC to the second, as `JSONEncoder.DateEncodingStrategy.iso8601` writes it.
    mutating func date(_ value: Date) {
        self.out.append(UInt8(ascii: "\""))
        var seconds = time_t(value.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ number: Int32, _ width: Int) {
            let text = String(number)
            for _ in text.utf8.count..<width { self.out.append(UInt8(ascii: "0")) }
            self.out.append(contentsOf: text.utf8)
        }
        digits(parts.tm_year + 1900, 4); self.out.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2); self.out.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2); self.out.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2); self.out.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2); self.out.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2); self.out.append(contentsOf: "Z\"".utf8)
    }

    mutating func progress(_ value: TransferProgress) {
        self.open("{")
        self.key("completed"); self.integer(value.completed)
        self.key("total"); self.integer(value.total)
        self.close("}")
    }

    mutating func metrics(_ value: TaskMetrics) {
        self.open("{")
        self.key("connectMs"); self.double(value.connectMs)
        self.key("dnsMs"); self.double(value.dnsMs)
        self.key("httpVersion"); self.string(value.httpVersion)
        self.key("remoteAddress"); self.string(value.remoteAddress)
        self.key("reusedConnection"); self.bool(value.reusedConnection)
        self.key("tlsMs"); self.double(value.tlsMs)
        self.key("totalMs"); self.double(value.totalMs)
        self.key("ttfbMs"); self.double(value.ttfbMs)
        self.close("}")
    }

    mutating func resumes(_ value: [TaskResume]) {
        self.open("[")
        for (index, resume) in value.enumerated() {
            if index > 0 { self.out.append(UInt8(ascii: ",")) }
            self.open("{")
            self.key("at"); self.date(resume.at)
            self.key("offset"); self.integer(resume.offset)
            self.close("}")
        }
        self.close("]")
    }

    mutating func file(_ value: DownloadFile?) {
        guard let value else { return self.null() }
        self.open("{")
        self.key("attempt"); self.integer(Int64(value.attempt))
        self.key("insecure"); self.bool(value.insecure)
        self.key("keepPartial"); self.bool(value.keepPartial)
        self.key("lastError"); self.string(value.lastError)
        self.key("maxAttempts"); self.integer(Int64(value.maxAttempts))
        self.key("partialPath"); self.string(value.partialPath)
        self.key("path"); self.string(value.path)
        self.key("pins")
        if let pins = value.pins {
            self.open("[")
            for (index, pin) in pins.enumerated() {
                if index > 0 { self.out.append(UInt8(ascii: ",")) }
                self.string(pin)
            }
            self.close("]")
        } else {
            self.null()
        }
        self.key("restarts")
        self.open("[")
        for (index, restart) in value.restarts.enumerated() {
            if index > 0 { self.out.append(UInt8(ascii: ",")) }
            self.open("{")
            self.key("at"); self.date(restart.at)
            self.key("reason"); self.string(restart.reason)
            self.close("}")
        }
        self.close("]")
        self.key("sha256"); self.string(value.sha256)
        self.close("}")
    }

    mutating func limit(_ value: TaskLimit?) {
        guard let value else { return self.null() }
        self.open("{")
        for (name, entry) in [("down", value.down), ("up", value.up)] as [(StaticString, TaskLimit.Entry?)] {
            self.key(name)
            if let entry {
                self.open("{")
                self.key("bytesPerSecond"); self.integer(entry.bytesPerSecond)
                self.key("rule"); self.string(entry.rule)
                self.close("}")
            } else {
                self.null()
            }
        }
        self.close("}")
    }

    mutating func headers(_ value: HTTPHeaderList?) {
        guard let value else { return self.null() }
        self.open("[")
        for (index, field) in value.enumerated() {
            if index > 0 { self.out.append(UInt8(ascii: ",")) }
            self.open("{")
            self.key("name"); self.string(field.name)
            self.key("value"); self.string(field.value)
            self.close("}")
        }
        self.close("]")
    }
}

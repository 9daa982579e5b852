import AFProxyModel

/// A task event written by hand, byte for byte what `JSONEncoder` (sorted keys) makes of it, its
/// record as `TaskRecord.writeJSON` writes it. Every reader of `GET /v1/events` gets two of these
/// per request; through `Codable` encoding them was most of what such a reader cost the proxy.
extension TaskEvent {
    package func writeJSON(to out: inout [UInt8]) {
        out.append(contentsOf: #"{"event":""#.utf8)
        // Every kind's raw value is plain ASCII letters and dashes: nothing to escape.
        out.append(contentsOf: self.event.rawValue.utf8)
        out.append(contentsOf: #"","task":"#.utf8)
        self.task.writeJSON(to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

import AFProxyModel

/// Builds the final response head from the header lines curl hands over one by one. 1xx heads
/// (100 Continue, 103 Early Hints) are dropped: curl handles them, the client gets the final head.
struct ResponseHeadParser {
    private var status = 0
    private var reason = ""
    private var version = "1.1"
    private var headers: HTTPHeaderList = []
    private(set) var isComplete = false

    /// Feeds one line, with its CRLF. Answers the head when this line completed it.
    mutating func feed(_ line: UnsafeRawBufferPointer) -> ProxyResponseHead? {
        guard !self.isComplete else { return nil }  // trailers of a chunked body
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<end]), as: UTF8.self)

        if text.isEmpty {
            guard self.status != 0 else { return nil }
            if (100..<200).contains(self.status) && self.status != 101 {
                self = ResponseHeadParser()
                return nil
            }
            self.isComplete = true
            return ProxyResponseHead(status: self.status, reason: self.reason, version: self.version, headers: self.headers)
        }
        if text.hasPrefix("HTTP/") {
            self.parseStatusLine(text)
            return nil
        }
        if let first = text.first, first == " " || first == "\t", !self.headers.isEmpty {
            // obs-fold (RFC 9112 §5.2): replace with a space.
            self.headers[self.headers.count - 1].value += " " + text.drop { $0 == " " || $0 == "\t" }
            return nil
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = String(text[..<colon])
        let value = String(text[text.index(after: colon)...].trimmingSpaces())
        self.headers.append(HTTPHeaderField(name, value))
        return nil
    }

    private mutating func parseStatusLine(_ text: String) {
        self.headers = []
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        self.version = parts.first.map { String($0.dropFirst(5)) } ?? "1.1"
        self.status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        self.reason = parts.count > 2 ? String(parts[2]) : ""
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var view = self
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return view
    }
}

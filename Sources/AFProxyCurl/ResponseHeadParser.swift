import AFProxyModel

/// Builds the final response head from the header lines curl hands over one by one. 1xx heads
/// (100 Continue, 103 Early Hints) are dropped: curl handles them, the client gets the final head.
/// Works on the bytes: this runs for every header line of every response, and a String per
/// piece of a line showed up in profiles.
struct ResponseHeadParser {
    private var status = 0
    private var reason = ""
    private var version = "1.1"
    private var headers: HTTPHeaderList = []
    private(set) var isComplete = false

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    /// Feeds one line, with its CRLF. Answers the head when this line completed it.
    mutating func feed(_ line: UnsafeRawBufferPointer) -> ProxyResponseHead? {
        guard !self.isComplete else { return nil }  // trailers of a chunked body
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let bytes = UnsafeRawBufferPointer(rebasing: line[0..<end])

        if bytes.isEmpty {
            guard self.status != 0 else { return nil }
            if (100..<200).contains(self.status) && self.status != 101 {
                self = ResponseHeadParser()
                return nil
            }
            self.isComplete = true
            return ProxyResponseHead(status: self.status, reason: self.reason, version: self.version, headers: self.headers)
        }
        if bytes.starts(with: "HTTP/".utf8) {
            self.parseStatusLine(bytes)
            return nil
        }
        if bytes[0] == Self.space || bytes[0] == Self.tab {
            // obs-fold (RFC 9112 §5.2): replace with a space.
            guard !self.headers.isEmpty else { return nil }
            let rest = Self.trimmed(bytes, from: 0, to: bytes.count)
            self.headers[self.headers.count - 1].value += " " + String(decoding: rest, as: UTF8.self)
            return nil
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<colon]), as: UTF8.self)
        let value = String(decoding: Self.trimmed(bytes, from: colon + 1, to: bytes.count), as: UTF8.self)
        self.headers.append(HTTPHeaderField(name, value))
        return nil
    }

    /// `HTTP/1.1 200 OK`
    private mutating func parseStatusLine(_ bytes: UnsafeRawBufferPointer) {
        self.headers = []
        let firstSpace = bytes.firstIndex(of: Self.space) ?? bytes.count
        self.version = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[5..<firstSpace]), as: UTF8.self)
        var index = firstSpace
        while index < bytes.count, bytes[index] == Self.space { index += 1 }
        var status = 0
        while index < bytes.count, (48...57).contains(bytes[index]) {
            status = status * 10 + Int(bytes[index] - 48)
            index += 1
        }
        self.status = status
        self.reason = String(decoding: Self.trimmed(bytes, from: index, to: bytes.count), as: UTF8.self)
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> UnsafeRawBufferPointer {
        var start = start
        var end = end
        while start < end, bytes[start] == Self.space || bytes[start] == Self.tab { start += 1 }
        while end > start, bytes[end - 1] == Self.space || bytes[end - 1] == Self.tab { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}

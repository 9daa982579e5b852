import AFProxyModel

/// Builds response heads from the header lines curl hands over one by one, and checks each line
/// as a proxy must before passing it on (RFC 9112 §2.2, §5): a field name is a token (no space
/// before the colon), a value holds no NUL, bare CR or other control byte, obsolete line folding
/// becomes a space, and the final head's framing goes through `ResponseFraming`. Interim 1xx
/// heads are reported on their own; lines after the final head are the chunked body's trailer
/// fields. Works on the bytes: this runs for every header line of every response. Values and
/// the reason phrase keep bytes that are not UTF-8 (`FieldText`).
struct ResponseHeadParser {
    enum Event: Equatable {
        /// A complete 1xx head (102, 103; not 101, which is refused).
        case interim(ProxyResponseHead)
        /// The final head, framing normalized.
        case final(ProxyResponseHead)
        /// The response cannot be passed on.
        case invalid(String)
    }

    private var status = 0
    private var reason = ""
    private var version = "1.1"
    private var headers: HTTPHeaderList = []
    private(set) var isComplete = false
    /// An invalid line was reported: curl aborts the transfer, and nothing after it counts.
    private var failed = false
    /// Trailer fields of a chunked body, once the final head is complete.
    private(set) var trailers: HTTPHeaderList = []
    /// curl follows redirects for this transfer: a 3xx head with a Location is a step on the way,
    /// not the final head, and the next response's head follows it.
    var followsRedirects = false

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    /// Feeds one line, with its line ending. Answers an event when this line completed a head or
    /// was invalid.
    mutating func feed(_ line: UnsafeRawBufferPointer) -> Event? {
        guard !self.failed else { return nil }
        let event = self.parse(line)
        if case .invalid = event { self.failed = true }
        return event
    }

    private mutating func parse(_ line: UnsafeRawBufferPointer) -> Event? {
        var end = line.count
        if end > 0, line[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        if end > 0, line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let bytes = UnsafeRawBufferPointer(rebasing: line[0..<end])

        if bytes.isEmpty {
            guard !self.isComplete, self.status != 0 else { return nil }
            let head = ProxyResponseHead(
                status: self.status, reason: self.reason, version: self.version, headers: self.headers)
            if (100..<200).contains(self.status) {
                guard self.status != 101 else { return .invalid("upstream switched protocols (101) unasked") }
                self = ResponseHeadParser()
                return .interim(head)
            }
            if self.followsRedirects, (300..<400).contains(self.status), self.status != 304,
                self.headers.first("location") != nil
            {
                self = ResponseHeadParser()
                self.followsRedirects = true
                return nil
            }
            self.isComplete = true
            self.headers = []
            switch ResponseFraming.normalize(head) {
            case .success(let normalized): return .final(normalized)
            case .failure(let error): return .invalid(error.message)
            }
        }
        if !self.isComplete && bytes.starts(with: "HTTP/".utf8) {
            return self.parseStatusLine(bytes)
        }
        if let bad = Self.invalidByte(in: bytes) {
            return .invalid("a response field holds the control byte 0x\(String(bad, radix: 16))")
        }
        if bytes[0] == Self.space || bytes[0] == Self.tab {
            // obs-fold (RFC 9112 §5.2): replaced with a space.
            let rest = Self.trimmed(bytes, from: 0, to: bytes.count)
            let folded = FieldText.decode(rest)
            if self.isComplete {
                guard !self.trailers.isEmpty else { return .invalid("a trailer section starts with a folded line") }
                self.trailers[self.trailers.count - 1].value += " " + folded
            } else {
                guard !self.headers.isEmpty else { return .invalid("the response head starts with a folded line") }
                self.headers[self.headers.count - 1].value += " " + folded
            }
            return nil
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            return .invalid("a response field line has no colon")
        }
        let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[0..<colon])
        guard !nameBytes.isEmpty, nameBytes.allSatisfy(Self.isTokenByte) else {
            return .invalid("invalid response field name \"\(String(decoding: nameBytes.prefix(40), as: UTF8.self))\"")
        }
        let field = HTTPHeaderField(
            String(decoding: nameBytes, as: UTF8.self),
            FieldText.decode(Self.trimmed(bytes, from: colon + 1, to: bytes.count)))
        if self.isComplete {
            self.trailers.append(field)
        } else {
            self.headers.append(field)
        }
        return nil
    }

    /// `HTTP/1.1 200 OK`: curl has checked the version and the code by now.
    private mutating func parseStatusLine(_ bytes: UnsafeRawBufferPointer) -> Event? {
        if let bad = Self.invalidByte(in: bytes) {
            return .invalid("the status line holds the control byte 0x\(String(bad, radix: 16))")
        }
        self.headers = []
        // HTTP-version = "HTTP/" DIGIT "." DIGIT, then a space (RFC 9112 §2.3, §4). curl reads
        // only the digits; what follows them is checked here, since the version is passed on
        // (in Via).
        let decimal = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard bytes.count > 9, decimal.contains(bytes[5]), bytes[6] == UInt8(ascii: "."), decimal.contains(bytes[7]),
            bytes[8] == Self.space
        else {
            return .invalid("the status line has no valid HTTP version")
        }
        self.version = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[5..<8]), as: UTF8.self)
        var index = 8
        while index < bytes.count, bytes[index] == Self.space { index += 1 }
        var status = 0
        var digits = 0
        while index < bytes.count, (48...57).contains(bytes[index]), digits < 4 {  // 4: too many, not an overflow
            status = status * 10 + Int(bytes[index] - 48)
            index += 1
            digits += 1
        }
        guard digits == 3 else { return .invalid("the status line has no three-digit status code") }
        self.status = status
        // The reason phrase is the origin's, passed on as it came: only leading and trailing
        // blanks go (the single space after the code is syntax).
        self.reason = FieldText.decode(Self.trimmed(bytes, from: index, to: bytes.count))
        return nil
    }

    /// The first byte a field line or status line may not hold: CTLs other than HTAB (NUL and a
    /// bare CR among them, RFC 9112 §2.2 and RFC 9110 §5.5).
    private static func invalidByte(in bytes: UnsafeRawBufferPointer) -> UInt8? {
        bytes.first { ($0 < 0x20 && $0 != Self.tab) || $0 == 0x7F }
    }

    /// tchar of RFC 9110 §5.6.2.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> UnsafeRawBufferPointer
    {
        var start = start
        var end = end
        while start < end, bytes[start] == Self.space || bytes[start] == Self.tab { start += 1 }
        while end > start, bytes[end - 1] == Self.space || bytes[end - 1] == Self.tab { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}

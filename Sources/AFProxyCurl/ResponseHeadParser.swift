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

    /// Fields a response head usually has, at most (nginx sends 8, a CDN 15-20).
    static let usualFieldCount = 16

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
    /// The origin's message needed leniency to be read: a line ended in a bare LF, a line was
    /// folded, or the framing fields had to be made unambiguous (two equal lengths merged, a length
    /// beside chunked dropped, chunked named twice, a transfer coding in an HTTP/1.0 answer). Its
    /// connection is then not reused (RFC 9112 §6.1, §6.3 ask this for the framing cases): where
    /// one message was sloppy, where the next begins is a guess, and a guess on a reused
    /// connection hands one request another's answer.
    private(set) var retiresConnection = false

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
        if end > 0, line[end - 1] == UInt8(ascii: "\r") {
            end -= 1
        } else if end < line.count {
            self.retiresConnection = true
        }
        let bytes = UnsafeRawBufferPointer(rebasing: line[0..<end])

        if bytes.isEmpty {
            guard !self.isComplete, self.status != 0 else { return nil }
            let head = ProxyResponseHead(
                status: self.status, reason: self.reason, version: self.version, headers: self.headers)
            if (100..<200).contains(self.status) {
                guard self.status != 101 else { return .invalid("upstream switched protocols (101) unasked") }
                self.startOver()
                return .interim(head)
            }
            if self.followsRedirects, (300..<400).contains(self.status), self.status != 304,
                self.headers.first("location") != nil
            {
                self.startOver()
                return nil
            }
            self.isComplete = true
            self.headers = []
            switch ResponseFraming.normalize(head) {
            case .success(let normalized):
                if normalized.headers != head.headers || (head.version == "1.0" && !head.transferCodings.isEmpty) {
                    self.retiresConnection = true
                }
                return .final(normalized)
            case .failure(let error):
                return .invalid(error.message)
            }
        }
        if !self.isComplete && bytes.starts(with: "HTTP/".utf8) {
            return self.parseStatusLine(bytes)
        }
        switch FieldLine.parse(bytes) {
        case .invalid(let reason):
            return .invalid(reason)
        case .continuation(let folded):
            // obs-fold (RFC 9112 §5.2): replaced with a space.
            self.retiresConnection = true
            if self.isComplete {
                guard !self.trailers.isEmpty else { return .invalid("a trailer section starts with a folded line") }
                FieldLine.unfold(folded, onto: &self.trailers[self.trailers.count - 1].value)
            } else {
                guard !self.headers.isEmpty else { return .invalid("the response head starts with a folded line") }
                FieldLine.unfold(folded, onto: &self.headers[self.headers.count - 1].value)
            }
        case .field(let field):
            if self.isComplete {
                self.trailers.append(field)
            } else {
                self.headers.append(field)
            }
        }
        return nil
    }

    /// The next head on the same transfer (after an interim head or a followed redirect): what the
    /// connection has shown so far still counts.
    private mutating func startOver() {
        let (follows, retires) = (self.followsRedirects, self.retiresConnection)
        self = ResponseHeadParser()
        self.followsRedirects = follows
        self.retiresConnection = retires
    }

    /// `HTTP/1.1 200 OK` or `HTTP/2 200`: curl has checked the version and the code by now.
    private mutating func parseStatusLine(_ bytes: UnsafeRawBufferPointer) -> Event? {
        if let bad = FieldLine.invalidByte(in: bytes) {
            return .invalid("the status line holds the control byte 0x\(String(bad, radix: 16))")
        }
        // Room for a usual head's fields at once: growing by doubling took four allocations a response.
        self.headers = []
        self.headers.reserveCapacity(Self.usualFieldCount)
        // HTTP-version = "HTTP/" DIGIT "." DIGIT, then a space (RFC 9112 §2.3, §4). curl reads
        // only the digits; what follows them is checked here, since the version is passed on
        // (in Via).
        // curl writes an HTTP/2 or HTTP/3 head as `HTTP/2 200` (the version has no minor digit
        // there, and the message no reason phrase).
        let decimal = UInt8(ascii: "0")...UInt8(ascii: "9")
        let versionEnd: Int
        if bytes.count > 9, decimal.contains(bytes[5]), bytes[6] == UInt8(ascii: "."), decimal.contains(bytes[7]),
            bytes[8] == FieldLine.space
        {
            versionEnd = 8
        } else if bytes.count > 7, (UInt8(ascii: "2")...UInt8(ascii: "3")).contains(bytes[5]),
            bytes[6] == FieldLine.space
        {
            versionEnd = 6
        } else {
            return .invalid("the status line has no valid HTTP version")
        }
        self.version = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[5..<versionEnd]), as: UTF8.self)
        var index = versionEnd
        while index < bytes.count, bytes[index] == FieldLine.space { index += 1 }
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
        self.reason = FieldText.decode(FieldLine.trimmed(bytes, from: index, to: bytes.count))
        return nil
    }
}

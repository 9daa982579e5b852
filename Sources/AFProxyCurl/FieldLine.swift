import AFProxyModel

/// The checks a proxy makes of one field line before passing it on (RFC 9112 §2.2, §5; RFC 9110
/// §5.5, §5.6.2), shared by the response head and the trailer section of a chunked body, so that
/// a trailer field is held to exactly what a head field is.
enum FieldLine {
    /// What a line (without its line ending) is.
    enum Parsed: Equatable {
        case field(HTTPHeaderField)
        /// obs-fold (RFC 9112 §5.2): the text that continues the previous field's value, to be
        /// joined to it with a space.
        case continuation(String)
        case invalid(String)
    }

    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")

    /// A field line or a folded continuation line.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Parsed {
        if let bad = Self.invalidByte(in: bytes) {
            return .invalid("a response field holds the control byte 0x\(String(bad, radix: 16))")
        }
        if let first = bytes.first, first == Self.space || first == Self.tab {
            return .continuation(FieldText.decode(Self.trimmed(bytes, from: 0, to: bytes.count)))
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            return .invalid("a response field line has no colon")
        }
        let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[0..<colon])
        guard !nameBytes.isEmpty, nameBytes.allSatisfy(Self.isTokenByte) else {
            return .invalid("invalid response field name \"\(String(decoding: nameBytes.prefix(40), as: UTF8.self))\"")
        }
        return .field(
            HTTPHeaderField(
                String(decoding: nameBytes, as: UTF8.self),
                FieldText.decode(Self.trimmed(bytes, from: colon + 1, to: bytes.count))))
    }

    /// The first byte a field line or status line may not hold: CTLs other than HTAB (NUL and a
    /// bare CR among them, RFC 9112 §2.2 and RFC 9110 §5.5).
    static func invalidByte(in bytes: UnsafeRawBufferPointer) -> UInt8? {
        bytes.first { ($0 < 0x20 && $0 != Self.tab) || $0 == 0x7F }
    }

    /// tchar of RFC 9110 §5.6.2.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Joins an obs-fold continuation to the value it continues (RFC 9112 §5.2: the fold becomes
    /// one space). A blank continuation adds nothing and a fold onto an empty value adds no
    /// space, so a value never starts or ends with a blank: `Content-Length: 0` folded onto a
    /// blank line would otherwise reach the client as `0 `, a length its parser may refuse.
    static func unfold(_ folded: String, onto value: inout String) {
        guard !folded.isEmpty else { return }
        if value.isEmpty {
            value = folded
        } else {
            value += " " + folded
        }
    }

    static func trimmed(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> UnsafeRawBufferPointer {
        var start = start
        var end = end
        while start < end, bytes[start] == Self.space || bytes[start] == Self.tab { start += 1 }
        while end > start, bytes[end - 1] == Self.space || bytes[end - 1] == Self.tab { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}

import AFProxyModel

/// Reads a chunked body (RFC 9112 §7.1) from the raw bytes curl receives, strictly, in whatever
/// pieces they come. It exists because libcurl 7.88's own decoder is lenient: it reads a
/// chunk-size line as its leading hex digits and skips the rest, so `0x10` is a last chunk and a
/// body cut short looked complete to the client. With curl's decoding off, this is what decides
/// the body's bytes, its trailer fields and whether it ended.
///
/// A plain value: a transfer keeps one, and a copy taken before a write callback is what it goes
/// back to when the delegate refuses that callback's bytes (curl hands the same bytes over again).
///
/// What it accepts, and why no more:
/// - chunk-size is 1*HEXDIG and nothing else: no `0x`, sign, leading blank, NUL or empty line.
///   Leading zeros are digits (`000a`), but at most 16 digits in all and a value that fits
///   `Int64`; curl refuses more than 16 as well.
/// - after the size, only a chunk extension (RFC 9112 §7.1.1), optionally after blanks (BWS):
///   `;` and then any bytes but control bytes other than HTAB, up to CRLF. Its inner syntax is
///   not checked: afproxy drops extensions when it frames the body anew, so they cannot change
///   how a later hop reads the message; only where the line ends matters, and that is checked.
///   Blanks not followed by `;` (`10 `) are invalid.
/// - every line of the body ends in CRLF: chunk-size lines, the CRLF after chunk data and the
///   trailer lines. A bare LF is refused although RFC 9112 §2.2 lets a recipient accept one in a
///   head: hops that disagree on where a chunk line ends is how bodies are smuggled, nothing
///   downstream needs the leniency (the client gets the body framed anew), and the leniency of
///   exactly this kind is what let broken framing through.
/// - the message is complete only after the last chunk, the trailer section and the CRLF that
///   ends it. A connection that closes before, even in that final CRLF or after a lone CR there,
///   leaves the body incomplete: the trailer section may have lost fields and its end never came,
///   so the client must see a truncated message rather than a complete one missing trailers.
/// - trailer fields are checked as the head's are (`FieldLine`); obs-fold becomes a space.
/// - bytes after the end are ignored (curl does not reuse a connection that sent them).
struct ChunkedBodyDecoder: Sendable, Equatable {
    enum State: Equatable, Sendable {
        case decoding
        /// The last chunk, the trailer section and its final CRLF arrived.
        case complete
        /// The framing is broken; nothing more is decoded.
        case invalid(String)
    }

    private enum Phase: Equatable, Sendable {
        /// Reading the hex digits of a chunk-size line.
        case size
        /// Blanks after the size: only `;` or more blanks may follow.
        case sizeBlanks
        /// Inside a chunk extension, up to the CR.
        case extensions
        /// The CR of a chunk-size line arrived; the LF must follow.
        case sizeLF
        case data
        /// Chunk data is complete: CR then LF must follow.
        case dataCR
        case dataLF
        /// Reading a trailer line (or the empty line that ends the section).
        case trailer
        case trailerLF
        case done
    }

    /// The most bytes the trailer section may hold: curl's own limit for a head is 100 KiB.
    static let trailerLimit = 64 << 10
    /// 16 hex digits: what curl reads at most, and all an `Int64` can hold.
    static let maximumSizeDigits = 16

    private(set) var state = State.decoding
    /// The trailer fields, complete once `state` is `.complete`.
    private(set) var trailers: HTTPHeaderList = []
    private var phase = Phase.size
    private var size: Int64 = 0
    private var digits = 0
    /// Data bytes of the current chunk still to come.
    private var remaining: Int64 = 0
    private var line: [UInt8] = []
    private var trailerBytes = 0

    var isComplete: Bool { self.state == .complete }

    /// Decodes `input`, appending the chunk data it holds to `output`, and answers the state after
    /// it. Stops at the first invalid byte or at the end of the message.
    @discardableResult
    mutating func decode(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) -> State {
        var index = 0
        while index < input.count, self.state == .decoding {
            if self.phase == .data {
                let count = Int(min(self.remaining, Int64(input.count - index)))
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index..<index + count]))
                index += count
                self.remaining -= Int64(count)
                if self.remaining == 0 { self.phase = .dataCR }
                continue
            }
            self.step(input[index])
            index += 1
        }
        return self.state
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    private mutating func step(_ byte: UInt8) {
        switch self.phase {
        case .size:
            if let value = byte.hexDigitValue {
                self.digits += 1
                guard self.digits <= Self.maximumSizeDigits, self.size <= (Int64.max - Int64(value)) >> 4 else {
                    return self.fail("the chunk size has more digits than fit in 64 bits")
                }
                self.size = self.size << 4 | Int64(value)
                return
            }
            guard self.digits > 0 else {
                return self.fail("a chunk-size line \(Self.describe(byte)) instead of a hex digit")
            }
            switch byte {
            case Self.cr: self.phase = .sizeLF
            case UInt8(ascii: ";"): self.phase = .extensions
            case FieldLine.space, FieldLine.tab: self.phase = .sizeBlanks
            default: self.fail("the chunk size is followed by \(Self.name(byte)), not by an extension or CRLF")
            }
        case .sizeBlanks:
            switch byte {
            case FieldLine.space, FieldLine.tab: break
            case UInt8(ascii: ";"): self.phase = .extensions
            default: self.fail("blanks after the chunk size are followed by \(Self.name(byte)), not by an extension")
            }
        case .extensions:
            if byte == Self.cr {
                self.phase = .sizeLF
            } else if (byte < 0x20 && byte != FieldLine.tab) || byte == 0x7F {
                self.fail("a chunk extension holds \(Self.name(byte))")
            }
        case .sizeLF:
            guard byte == Self.lf else { return self.fail("a chunk-size line ends in a CR without LF") }
            if self.size == 0 {
                self.phase = .trailer
            } else {
                self.remaining = self.size
                self.phase = .data
            }
            self.size = 0
            self.digits = 0
        case .data:
            break  // handled in bulk by `decode`
        case .dataCR:
            guard byte == Self.cr else { return self.fail("chunk data is not followed by CRLF") }
            self.phase = .dataLF
        case .dataLF:
            guard byte == Self.lf else { return self.fail("chunk data is not followed by CRLF") }
            self.phase = .size
        case .trailer:
            if byte == Self.cr {
                self.phase = .trailerLF
                return
            }
            guard byte != Self.lf else { return self.fail("a trailer line ends in a bare LF") }
            self.trailerBytes += 1
            guard self.trailerBytes <= Self.trailerLimit else {
                return self.fail("the trailer section is larger than \(Self.trailerLimit >> 10) KiB")
            }
            self.line.append(byte)
        case .trailerLF:
            guard byte == Self.lf else { return self.fail("a trailer line holds a CR without LF") }
            self.endTrailerLine()
        case .done:
            break
        }
    }

    private mutating func endTrailerLine() {
        guard !self.line.isEmpty else {
            self.phase = .done
            self.state = .complete
            return
        }
        let parsed = self.line.withUnsafeBytes { FieldLine.parse($0) }
        self.line.removeAll(keepingCapacity: true)
        self.phase = .trailer
        switch parsed {
        case .field(let field):
            self.trailers.append(field)
        case .continuation(let folded):
            guard !self.trailers.isEmpty else { return self.fail("the trailer section starts with a folded line") }
            FieldLine.unfold(folded, onto: &self.trailers[self.trailers.count - 1].value)
        case .invalid(let reason):
            self.fail("in the trailer section, \(reason)")
        }
    }

    private mutating func fail(_ reason: String) {
        self.state = .invalid(reason)
        self.phase = .done
        self.line = []
    }

    /// How a chunk-size line that starts wrong starts, for the reason.
    private static func describe(_ byte: UInt8) -> String {
        byte == Self.cr ? "is empty" : "starts with \(Self.name(byte))"
    }

    /// A byte for a reason a person reads: printable ones quoted, the rest in hex.
    private static func name(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte)
            ? "\"\(Character(Unicode.Scalar(byte)))\"" : "the byte 0x\(String(byte, radix: 16))"
    }
}

import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Reads JSON text in one pass, value by value, for a caller that knows the shape it wants and
/// skips the rest without building it: the read side of `JSONWriter`, for `TaskRow`. It exists
/// because `JSONDecoder` builds a map of the whole document and a dictionary of every object's
/// keys before a single field is read, and with a long task list that, not the few fields the
/// table needs, was most of what `afproxyctl list` cost, even for a lean `Decodable` row.
package struct JSONReader {
    /// Bad or unexpected JSON: what was expected and at which byte.
    package struct Failure: Error, Equatable, CustomStringConvertible {
        package var reason: String
        package var offset: Int

        package init(reason: String, offset: Int) {
            self.reason = reason
            self.offset = offset
        }

        package var description: String { "bad JSON at byte \(self.offset): \(self.reason)" }
    }

    private let bytes: [UInt8]
    private var index = 0
    /// Objects and arrays skipped inside each other: deeper is refused rather than recursed into.
    private static let depthLimit = 64

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    package func failure(_ reason: String) -> Failure {
        Failure(reason: reason, offset: self.index)
    }

    /// Nothing but white space is left.
    package mutating func end() throws {
        self.skipSpace()
        guard self.index == self.bytes.count else { throw self.failure("more after the value") }
    }

    /// An object: `field` is called with each key and must read (or `skip`) its value.
    package mutating func object(_ field: (inout JSONReader, String) throws -> Void) throws {
        try self.expect(UInt8(ascii: "{"))
        if self.next(is: UInt8(ascii: "}")) { return }
        repeat {
            let key = try self.string()
            try self.expect(UInt8(ascii: ":"))
            try field(&self, key)
        } while try self.more(closing: UInt8(ascii: "}"))
    }

    /// An array: `element` is called for each element and must read (or `skip`) it.
    package mutating func array(_ element: (inout JSONReader) throws -> Void) throws {
        try self.expect(UInt8(ascii: "["))
        if self.next(is: UInt8(ascii: "]")) { return }
        repeat {
            try element(&self)
        } while try self.more(closing: UInt8(ascii: "]"))
    }

    /// `null`, read: true; anything else is left to be read.
    package mutating func null() -> Bool {
        self.skipSpace()
        guard self.bytes.count - self.index >= 4, self.bytes[self.index] == UInt8(ascii: "n"),
            self.bytes[self.index + 1] == UInt8(ascii: "u"), self.bytes[self.index + 2] == UInt8(ascii: "l"),
            self.bytes[self.index + 3] == UInt8(ascii: "l")
        else { return false }
        self.index += 4
        return true
    }

    /// A value that may be `null`, read with `read` otherwise.
    package mutating func optional<T>(_ read: (inout JSONReader) throws -> T) throws -> T? {
        self.null() ? nil : try read(&self)
    }

    package mutating func bool() throws -> Bool {
        if try self.literal("true") { return true }
        if try self.literal("false") { return false }
        throw self.failure("expected true or false")
    }

    /// A whole number: digits with an optional minus, as the daemon writes counts and ids.
    package mutating func integer() throws -> Int64 {
        self.skipSpace()
        let negative = self.next(is: UInt8(ascii: "-"))
        var value: Int64 = 0
        let start = self.index
        while self.index < self.bytes.count, (0x30...0x39).contains(self.bytes[self.index]) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(Int64(self.bytes[self.index] - 0x30))
            guard !overflow, !carry else { throw self.failure("number out of range") }
            value = sum
            self.index += 1
        }
        guard self.index > start else { throw self.failure("expected a number") }
        if self.index < self.bytes.count, Self.numberBytes.contains(self.bytes[self.index]) {
            throw self.failure("expected a whole number")
        }
        return negative ? -value : value
    }

    package mutating func int() throws -> Int {
        Int(try self.integer())
    }

    package mutating func string() throws -> String {
        try self.expect(UInt8(ascii: "\""))
        let start = self.index
        // Most strings have no escape: taken as they are.
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            if byte == UInt8(ascii: "\"") {
                self.index += 1
                return String(decoding: self.bytes[start..<(self.index - 1)], as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw self.failure("control character in a string") }
            self.index += 1
        }
        var text = Array(self.bytes[start..<self.index])
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            self.index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"): try self.escape(into: &text)
            case 0..<0x20: throw self.failure("control character in a string")
            default: text.append(byte)
            }
        }
        throw self.failure("unterminated string")
    }

    /// `2025-05-01T10:00:00Z`: ISO 8601 in UTC to the second, as `JSONWriter.date` writes it.
    package mutating func date() throws -> Date {
        let text = Array(try self.string().utf8)
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for index in range {
                guard text[index] >= 0x30, text[index] <= 0x39 else { return nil }
                value = value * 10 + Int32(text[index] - 0x30)
            }
            return value
        }
        guard text.count == 20, text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"),
            text[10] == UInt8(ascii: "T"), text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
            text[19] == UInt8(ascii: "Z"), let year = number(0..<4), let month = number(5..<7),
            let day = number(8..<10), let hour = number(11..<13), let minute = number(14..<16),
            let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { throw self.failure("expected a date like 2025-05-01T10:00:00Z") }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Date(timeIntervalSince1970: Double(timegm(&parts)))
    }

    /// Any value, passed over unread.
    package mutating func skip() throws {
        try self.skip(depth: 0)
    }

    private mutating func skip(depth: Int) throws {
        guard depth < Self.depthLimit else { throw self.failure("nested too deep") }
        self.skipSpace()
        guard self.index < self.bytes.count else { throw self.failure("expected a value") }
        switch self.bytes[self.index] {
        case UInt8(ascii: "{"): try self.object { reader, _ in try reader.skip(depth: depth + 1) }
        case UInt8(ascii: "["): try self.array { reader in try reader.skip(depth: depth + 1) }
        case UInt8(ascii: "\""): _ = try self.string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try self.bool()
        case UInt8(ascii: "n"): guard self.null() else { throw self.failure("expected null") }
        default:
            let start = self.index
            while self.index < self.bytes.count, Self.numberBytes.contains(self.bytes[self.index]) { self.index += 1 }
            guard self.index > start else { throw self.failure("expected a value") }
        }
    }

    private static let numberBytes: Set<UInt8> = Set("+-0123456789.eE".utf8)

    // MARK: the bytes

    private mutating func skipSpace() {
        while self.index < self.bytes.count {
            switch self.bytes[self.index] {
            case 0x20, 0x0A, 0x0D, 0x09: self.index += 1
            default: return
            }
        }
    }

    /// The next byte after white space is `byte`: taken.
    private mutating func next(is byte: UInt8) -> Bool {
        self.skipSpace()
        guard self.index < self.bytes.count, self.bytes[self.index] == byte else { return false }
        self.index += 1
        return true
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard self.next(is: byte) else { throw self.failure("expected \(Character(Unicode.Scalar(byte)))") }
    }

    /// After an element: a comma (true, more follow) or the closing bracket (false).
    private mutating func more(closing: UInt8) throws -> Bool {
        if self.next(is: UInt8(ascii: ",")) { return true }
        if self.next(is: closing) { return false }
        throw self.failure("expected , or \(Character(Unicode.Scalar(closing)))")
    }

    private mutating func literal(_ word: StaticString) throws -> Bool {
        self.skipSpace()
        let count = word.utf8CodeUnitCount
        guard self.bytes.count - self.index >= count else { return false }
        let matches = word.withUTF8Buffer { $0.elementsEqual(self.bytes[self.index..<(self.index + count)]) }
        if matches { self.index += count }
        return matches
    }

    /// After a backslash: the character it stands for, as UTF-8.
    private mutating func escape(into text: inout [UInt8]) throws {
        guard self.index < self.bytes.count else { throw self.failure("unterminated string") }
        let byte = self.bytes[self.index]
        self.index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(byte)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try self.hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate: its low half must follow as another \u.
                guard self.bytes.count - self.index >= 6, self.bytes[self.index] == UInt8(ascii: "\\"),
                    self.bytes[self.index + 1] == UInt8(ascii: "u")
                else { throw self.failure("unpaired surrogate") }
                self.index += 2
                let low = try self.hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw self.failure("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let value = Unicode.Scalar(scalar) else { throw self.failure("unpaired surrogate") }
            text.append(contentsOf: String(Character(value)).utf8)
        default:
            throw self.failure("unknown escape \\\(Character(Unicode.Scalar(byte)))")
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard self.bytes.count - self.index >= 4 else { throw self.failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = self.bytes[self.index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x61...0x66: digit = byte - 0x61 + 10
            case 0x41...0x46: digit = byte - 0x41 + 10
            default: throw self.failure("bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
            self.index += 1
        }
        return value
    }
}

import AFProxyCLI
import AFProxyModel
import FoundationEssentials
import Testing

/// The reader against what `JSONEncoder` writes and against bad text.
@Suite struct JSONReaderTests {
    private func reader(_ text: String) -> JSONReader {
        JSONReader(Array(text.utf8))
    }

    /// Every string the encoder writes reads back as it was: escapes, control characters, and
    /// characters outside the BMP written raw or as surrogate pairs.
    @Test func stringsReadBackAsTheyWere() throws {
        let strings = [
            "", "plain", "quote \" backslash \\ slash /", "tab\t newline\n return\r bell \u{7} nul \u{0} del \u{7F}",
            "é ✓ 😀 𝄞", "\u{2028}\u{2029}",
        ]
        for string in strings {
            let json = String(decoding: try JSONEncoder().encode([string]), as: UTF8.self)
            var reader = self.reader(json)
            var read: [String] = []
            try reader.array { read.append(try $0.string()) }
            try reader.end()
            #expect(read == [string], "\(json)")
        }
        var escaped = self.reader(#" "\u00e9\uD83D\uDE00\/\b\f" "#)
        #expect(try escaped.string() == "é😀/\u{8}\u{C}")
        try escaped.end()
    }

    @Test func badStringsAreRefused() {
        for text in [
            #""open"#, #""\x""#, #""\u12""#, #""\ud83d""#, #""\ud83d\u0041""#, #""\udc00""#, "\"a\u{1}b\"", "x",
        ] {
            var reader = self.reader(text)
            #expect(throws: JSONReader.Failure.self, "\(text)") { try reader.string() }
        }
    }

    @Test func integersToTheLimitsOfInt64() throws {
        for (text, value) in [
            ("0", Int64(0)), ("-7", -7), ("9223372036854775807", .max), ("-9223372036854775807", -.max),
        ] {
            var reader = self.reader(text)
            #expect(try reader.integer() == value)
        }
        for text in ["9223372036854775808", "1.5", "1e3", "-", "x", ""] {
            var reader = self.reader(text)
            #expect(throws: JSONReader.Failure.self, "\(text)") { try reader.integer() }
        }
    }

    @Test func datesAsTheWriterWritesThem() throws {
        var reader = self.reader(#"["1970-01-01T00:00:00Z", "2026-11-18T11:06:45Z"]"#)
        var dates: [Date] = []
        try reader.array { dates.append(try $0.date()) }
        #expect(dates == [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_795_000_005)])
        for text in [#""2026-11-18 11:06:45Z""#, #""2026-13-18T11:06:45Z""#, #""2026-11-18T11:06:45+01:00""#, "0"] {
            var bad = self.reader(text)
            #expect(throws: JSONReader.Failure.self, "\(text)") { try bad.date() }
        }
    }

    @Test func anyValueCanBeSkipped() throws {
        var reader = self.reader(
            #" {"a": [1, -2.5e-3, true, false, null, "s\"]", {}, []], "b": {"c": {"d": [[{"e": "f"}]]}}} "#)
        try reader.skip()
        try reader.end()
        var keys: [String] = []
        var object = self.reader(#"{"a": {"x": [1, 2]}, "b": null, "c": 3}"#)
        try object.object { reader, key in
            keys.append(key)
            try reader.skip()
        }
        #expect(keys == ["a", "b", "c"])
    }

    /// A value nested past the limit is refused, not recursed into until the stack runs out.
    @Test func deepNestingIsRefused() {
        var reader = self.reader(String(repeating: "[", count: 100_000))
        #expect(throws: JSONReader.Failure.self) { try reader.skip() }
    }

    @Test func badStructureSaysWhereAndWhat() {
        var reader = self.reader(#"{"a": 1 "b": 2}"#)
        #expect(throws: JSONReader.Failure(reason: "expected , or }", offset: 8)) {
            try reader.object { reader, _ in try reader.skip() }
        }
        for text in [#"{"a" 1}"#, #"{a: 1}"#, "[1,]", "[1", "{", "nul", "tru", "]"] {
            var bad = self.reader(text)
            #expect(throws: JSONReader.Failure.self, "\(text)") { try bad.skip() }
        }
    }
}

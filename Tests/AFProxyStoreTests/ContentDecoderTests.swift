import Testing

@testable import AFProxyStore

/// Content codings undone for viewing, on fixed streams (made once with Python's zlib and brotli).
@Suite struct ContentDecoderTests {
    static let brotliPlain = Array(String(repeating: "hello brotli, hello brotli, hello brotli!\n", count: 3).utf8)
    static let brotli: [UInt8] = [
        0x1b, 0x7d, 0x00, 0xf8, 0x1d, 0x07, 0x6e, 0x2c, 0xcd, 0x7b, 0x4e, 0x62, 0x78, 0xb0, 0x01, 0x47, 0xda, 0xbe,
        0xd2, 0x34, 0x8c, 0xa7, 0x42, 0x99, 0x5c, 0xb2, 0xa5, 0xbd, 0x75, 0x14, 0x54, 0x18, 0xc3, 0x94, 0x7a, 0x20,
        0x87, 0x61, 0x9b, 0xc9, 0x5f, 0x06, 0x44, 0x99, 0x30,
    ]
    static let deflatePlain = Array(String(repeating: "deflated text, deflated text\n", count: 2).utf8)
    static let deflate: [UInt8] = [
        0x78, 0x9c, 0x4b, 0x49, 0x4d, 0xcb, 0x49, 0x2c, 0x49, 0x4d, 0x51, 0x28, 0x49, 0xad, 0x28, 0xd1, 0x51, 0x48,
        0x41, 0xe6, 0x72, 0xa5, 0xe0, 0x93, 0x04, 0x00, 0x78, 0x76, 0x15, 0x25,
    ]
    /// The deflate stream without zlib's 2-byte header and 4-byte check: "raw deflate", as some servers send it.
    static var rawDeflate: [UInt8] { Array(Self.deflate.dropFirst(2).dropLast(4)) }
    /// gzip: deflate's raw stream in gzip's header and trailer (CRC-32 and length of the plain text).
    static let gzip: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0x49, 0x4d, 0xcb, 0x49, 0x2c, 0x49, 0x4d,
        0x51, 0x28, 0x49, 0xad, 0x28, 0xd1, 0x51, 0x48, 0x41, 0xe6, 0x72, 0xa5, 0xe0, 0x93, 0x04, 0x00, 0xde, 0xb1,
        0xab, 0x4e, 0x3a, 0x00, 0x00, 0x00,
    ]

    @Test func eachCodingIsUndone() throws {
        #expect(
            try ContentDecoder.decode(Self.brotli, codings: ["br"], limit: 1 << 20).get()
                == .init(bytes: Self.brotliPlain, truncated: false))
        #expect(
            try ContentDecoder.decode(Self.deflate, codings: ["deflate"], limit: 1 << 20).get().bytes
                == Self.deflatePlain)
        #expect(
            try ContentDecoder.decode(Self.rawDeflate, codings: ["Deflate"], limit: 1 << 20).get().bytes
                == Self.deflatePlain)
        #expect(
            try ContentDecoder.decode(Self.gzip, codings: ["identity", "gzip"], limit: 1 << 20).get()
                == .init(bytes: Self.deflatePlain, truncated: false))
    }

    @Test func aCutBodyDecodesToItsStartAndTheLimitHolds() throws {
        let cut = try ContentDecoder.decode(Array(Self.brotli.prefix(20)), codings: ["br"], limit: 1 << 20).get()
        #expect(cut.truncated && Self.brotliPlain.starts(with: cut.bytes))
        let capped = try ContentDecoder.decode(Self.gzip, codings: ["gzip"], limit: 10).get()
        #expect(capped == .init(bytes: Array(Self.deflatePlain.prefix(10)), truncated: true))
    }

    @Test func unknownAndCorruptCodingsAreRefused() {
        #expect(ContentDecoder.decode([1, 2, 3], codings: ["zstd"], limit: 100) == .failure(.unknownCoding("zstd")))
        #expect(ContentDecoder.decode([1, 2, 3, 4, 5, 6], codings: ["gzip"], limit: 100) == .failure(.corrupt("gzip")))
    }
}

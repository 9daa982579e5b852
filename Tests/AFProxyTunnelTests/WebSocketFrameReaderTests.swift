import AFProxyModel
import AFProxyTunnel
import FoundationEssentials
import Testing

@Suite struct WebSocketFrameReaderTests {
    private static let at = Date(timeIntervalSince1970: 1_000_000)

    /// One frame as RFC 6455 §5.2 lays it out; `key` masks it, `wide` forces the 64-bit length.
    private static func frame(
        _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, key: [UInt8]? = nil, wide: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let bit: UInt8 = key == nil ? 0 : 0x80
        let count = payload.count
        if count < 126 && !wide {
            bytes.append(bit | UInt8(count))
        } else if count < 1 << 16 && !wide {
            bytes += [bit | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            bytes.append(bit | 127)
            bytes += (0..<8).reversed().map { UInt8((UInt64(count) >> (8 * UInt64($0))) & 0xFF) }
        }
        guard let key else { return bytes + payload }
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    private static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    private static func message(
        _ opcode: WebSocketMessage.Opcode, _ payload: [UInt8], direction: WebSocketMessage.Direction = .sent,
        size: Int? = nil
    ) -> WebSocketMessage {
        WebSocketMessage(
            direction: direction, opcode: opcode, size: Int64(size ?? payload.count), at: Self.at, payload: payload,
            cut: (size ?? payload.count) > payload.count)
    }

    private static func read(
        _ chunks: [[UInt8]], limit: Int = 1 << 20, direction: WebSocketMessage.Direction = .sent,
        skipsHTTPHead: Bool = false
    ) -> (messages: [WebSocketMessage], stopped: Bool) {
        var reader = WebSocketFrameReader(direction: direction, limit: limit, skipsHTTPHead: skipsHTTPHead)
        var messages: [WebSocketMessage] = []
        for chunk in chunks { messages += reader.read(chunk, at: Self.at) }
        return (messages, reader.stopped)
    }

    private static let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    /// A client's stream: masked, every length form, a fragmented message with a ping between
    /// its fragments, empty frames, a close.
    private static let stream: [UInt8] = {
        var bytes = frame(1, text("Hello"), key: key)
        bytes += frame(2, (0..<300).map { UInt8($0 % 251) }, key: key)
        bytes += frame(1, text("Hel"), fin: false, key: key)
        bytes += frame(9, text("are you there"), key: key)
        bytes += frame(0, text("lo "), fin: false, key: key)
        bytes += frame(0, [], fin: false, key: key)
        bytes += frame(0, text("world"), key: key)
        bytes += frame(2, [7, 7, 7], key: key, wide: true)
        bytes += frame(1, [], key: key)
        bytes += frame(8, [0x03, 0xE8], key: key)
        return bytes
    }()

    private static let expected: [WebSocketMessage] = [
        message(.text, text("Hello")),
        message(.binary, (0..<300).map { UInt8($0 % 251) }),
        message(.ping, text("are you there")),
        message(.text, text("Hello world")),
        message(.binary, [7, 7, 7]),
        message(.text, []),
        message(.close, [0x03, 0xE8]),
    ]

    @Test func readsMaskedFramesOfEveryLengthAndJoinsFragments() {
        let (messages, stopped) = Self.read([Self.stream])
        #expect(messages == Self.expected)
        #expect(!stopped)
    }

    @Test func anySplitReadsTheSame() {
        let stream = Self.stream
        for offset in 0...stream.count {
            let (messages, stopped) = Self.read([Array(stream[..<offset]), Array(stream[offset...])])
            #expect(messages == Self.expected, "split at \(offset)")
            #expect(!stopped)
        }
        #expect(Self.read(stream.map { [$0] }).messages == Self.expected)
        for first in stride(from: 0, to: stream.count, by: 7) {
            for second in stride(from: first, to: stream.count, by: 13) {
                let chunks = [Array(stream[..<first]), Array(stream[first..<second]), Array(stream[second...])]
                #expect(Self.read(chunks).messages == Self.expected, "split at \(first), \(second)")
            }
        }
    }

    @Test func readsSixteenAndSixtyFourBitLengthsUnmasked() {
        let medium = (0..<65_535).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let large = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 17) }
        let stream = Self.frame(2, medium) + Self.frame(2, large) + Self.frame(10, Self.text("pong"))
        let expected = [
            Self.message(.binary, medium, direction: .received), Self.message(.binary, large, direction: .received),
            Self.message(.pong, Self.text("pong"), direction: .received),
        ]
        #expect(Self.read([stream], direction: .received).messages == expected)
        let chunks = stride(from: 0, to: stream.count, by: 4096).map {
            Array(stream[$0..<min($0 + 4096, stream.count)])
        }
        #expect(Self.read(chunks, direction: .received).messages == expected)
        // A masked 70 000-byte message whose mask phase crosses the chunk boundaries.
        let masked = Self.frame(2, large, key: Self.key)
        let odd = stride(from: 0, to: masked.count, by: 1001).map { Array(masked[$0..<min($0 + 1001, masked.count)]) }
        #expect(Self.read(odd).messages == [Self.message(.binary, large)])
    }

    @Test func keepsPayloadsUpToTheLimitAndCountsTheRest() {
        let big = (0..<1000).map { UInt8($0 % 256) }
        let stream =
            Self.frame(2, big, key: Self.key) + Self.frame(1, Self.text("abcdef"), fin: false, key: Self.key)
            + Self.frame(0, Self.text("ghijkl"), key: Self.key) + Self.frame(1, Self.text("tiny"), key: Self.key)
        let messages = Self.read([stream], limit: 8).messages
        #expect(
            messages == [
                Self.message(.binary, Array(big[..<8]), size: 1000),
                Self.message(.text, Self.text("abcdefgh"), size: 12),
                Self.message(.text, Self.text("tiny")),
            ])
        #expect(messages.map(\.cut) == [true, true, false])
        let none = Self.read([stream], limit: 0).messages
        #expect(none.map(\.size) == [1000, 12, 4])
        #expect(none.allSatisfy { $0.payload == [] && $0.cut })
    }

    @Test func skipsTheOriginsAnswerHead() {
        let head = Self.text("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
        let stream = head + Self.frame(1, Self.text("hi")) + Self.frame(8, [])
        let expected = [
            Self.message(.text, Self.text("hi"), direction: .received),
            Self.message(.close, [], direction: .received),
        ]
        for offset in 0...stream.count {
            let chunks = [Array(stream[..<offset]), Array(stream[offset...])]
            #expect(Self.read(chunks, direction: .received, skipsHTTPHead: true).messages == expected)
        }
    }

    @Test func brokenFramingStopsReadingQuietly() {
        let hello = Self.frame(1, Self.text("hello"))
        let cases: [(String, [UInt8])] = [
            ("reserved opcode", Self.frame(3, Self.text("x"))),
            ("continuation with no message", Self.frame(0, Self.text("x"))),
            ("fragmented control frame", Self.frame(9, Self.text("x"), fin: false)),
            ("long control frame", Self.frame(9, Array(repeating: 1, count: 126))),
            ("a new message inside a fragmented one", Self.frame(1, Self.text("a"), fin: false) + hello),
            ("64-bit length with its top bit", [0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1, 0]),
        ]
        for (name, bad) in cases {
            let (messages, stopped) = Self.read([hello + bad + hello, hello])
            #expect(messages == [Self.message(.text, Self.text("hello"))], "\(name)")
            #expect(stopped, "\(name)")
        }
    }
}

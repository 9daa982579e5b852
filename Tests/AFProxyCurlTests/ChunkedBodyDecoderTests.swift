import AFProxyModel
import Testing

@testable import AFProxyCurl

@Suite struct ChunkedBodyDecoderTests {
    private struct Outcome: Equatable {
        var data: [UInt8]
        var state: ChunkedBodyDecoder.State
        var trailers: HTTPHeaderList
    }

    /// Feeds `wire` in pieces that end at `cuts`.
    private func decode(_ wire: [UInt8], cuts: [Int] = []) -> Outcome {
        var decoder = ChunkedBodyDecoder()
        var data: [UInt8] = []
        var start = 0
        for end in cuts + [wire.count] where end >= start {
            wire[start..<end].withUnsafeBytes { _ = decoder.decode($0, into: &data) }
            start = end
        }
        return Outcome(data: data, state: decoder.state, trailers: decoder.trailers)
    }

    private func decode(_ wire: String) -> Outcome { self.decode(Array(wire.utf8)) }

    private func isInvalid(_ outcome: Outcome) -> Bool {
        if case .invalid = outcome.state { return true }
        return false
    }

    /// The same outcome in one piece, cut in two at every byte, and byte by byte.
    private func expectSplitsAgree(_ wire: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let whole = self.decode(wire)
        for cut in 0...wire.count {
            #expect(self.decode(wire, cuts: [cut]) == whole, "cut at \(cut)", sourceLocation: sourceLocation)
        }
        #expect(self.decode(wire, cuts: Array(0...wire.count)) == whole, "byte by byte", sourceLocation: sourceLocation)
    }

    // MARK: valid bodies

    @Test func decodesChunksAndEndsAfterTheFinalCRLF() {
        let outcome = self.decode("4\r\nabcd\r\nA\r\n0123456789\r\n0\r\n\r\n")
        #expect(outcome == Outcome(data: Array("abcd0123456789".utf8), state: .complete, trailers: []))
    }

    @Test func acceptsUpperCaseAndZeroPaddedSizes() {
        let outcome = self.decode("000A\r\n0123456789\r\n0000\r\n\r\n")
        #expect(outcome.state == .complete)
        #expect(outcome.data == Array("0123456789".utf8))
    }

    @Test(arguments: [";a=b", ";name=\"quoted ; value\"", ";flag", " ; x = y", "\t;x", ";a=b;c"])
    func ignoresChunkExtensions(_ extensions: String) {
        let outcome = self.decode("3\(extensions)\r\nabc\r\n0\(extensions)\r\n\r\n")
        #expect(outcome == Outcome(data: Array("abc".utf8), state: .complete, trailers: []))
    }

    @Test func collectsTrailerFieldsCheckedLikeHeadFields() {
        let outcome = self.decode("3\r\nabc\r\n0\r\nX-Sum: 42\r\nX-Long: a\r\n\tb \r\nX-Empty:\r\n\r\n")
        #expect(outcome.state == .complete)
        #expect(outcome.trailers == [.init("X-Sum", "42"), .init("X-Long", "a b"), .init("X-Empty", "")])
    }

    @Test func aBlankFoldAddsNothingAndAFoldOntoAnEmptyValueNoSpace() {
        let outcome = self.decode("0\r\nX-Sum: 42\r\n \r\nX-Empty:\r\n\ttwo\r\n\r\n")
        #expect(outcome.state == .complete)
        #expect(outcome.trailers == [.init("X-Sum", "42"), .init("X-Empty", "two")])
    }

    @Test func ignoresBytesAfterTheEnd() {
        let outcome = self.decode("1\r\na\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n\r\nSMUGGLED")
        #expect(outcome == Outcome(data: Array("a".utf8), state: .complete, trailers: []))
    }

    @Test func decodesTheSameWhereverTheBytesAreCut() {
        self.expectSplitsAgree(Array("5;a=\"b\"\r\nhello\r\n1\r\n \r\n0\r\nX-T: v\r\n\r\nextra".utf8))
        self.expectSplitsAgree(Array("4\r\nabcd\r\n0x10\r\n\r\n0123456789abcdef".utf8))
        self.expectSplitsAgree(Array("3\r\nabcX\r\n0\r\n\r\n".utf8))
    }

    @Test func aLargeSizeAsksForThatManyBytes() {
        var decoder = ChunkedBodyDecoder()
        var data: [UInt8] = []
        Array("7fffffffffffffff\r\nxyz".utf8).withUnsafeBytes { _ = decoder.decode($0, into: &data) }
        #expect(decoder.state == .decoding)
        #expect(data == Array("xyz".utf8))
    }

    @Test func aCopyTakenBeforeDecodingDecodesTheSameBytesAgain() {
        var decoder = ChunkedBodyDecoder()
        var data: [UInt8] = []
        Array("3\r\nab".utf8).withUnsafeBytes { _ = decoder.decode($0, into: &data) }
        let snapshot = decoder
        let piece = Array("c\r\n0\r\nX-A: 1\r\n".utf8)
        piece.withUnsafeBytes { _ = decoder.decode($0, into: &data) }
        decoder = snapshot  // refused: curl offers the same bytes again
        data = Array("ab".utf8)
        piece.withUnsafeBytes { _ = decoder.decode($0, into: &data) }
        Array("\r\n".utf8).withUnsafeBytes { _ = decoder.decode($0, into: &data) }
        #expect(decoder.state == .complete)
        #expect(data == Array("abc".utf8))
        #expect(decoder.trailers == [.init("X-A", "1")])
    }

    // MARK: invalid framing

    /// Each size line after a first chunk of 4 bytes; the 16 data bytes after it must not be
    /// taken for the body.
    @Test(arguments: [
        "0x10", "+10", "-1", " 10", "10 ", "10\t", "\u{0}10", "10\u{0}", "", "zz", "10zz",
        "10000000000000000", "00000000000000010", "8000000000000000", "10;\u{1}", "10;a\nb",
    ])
    func refusesAChunkSizeLineThatIsNotHexDigitsAndExtensions(_ size: String) {
        let outcome = self.decode("4\r\nabcd\r\n\(size)\r\n0123456789abcdef\r\n0\r\n\r\n")
        #expect(self.isInvalid(outcome), "\(size.debugDescription): \(outcome.state)")
        #expect(outcome.data == Array("abcd".utf8))
    }

    @Test func refusesTheIssueBody() {
        var wire = Array("4\r\nabcd\r\n0x10\r\n\r\n".utf8)
        wire += Array(repeating: UInt8(ascii: "x"), count: 16)
        let outcome = self.decode(wire)
        #expect(outcome.state == .invalid("the chunk size is followed by \"x\", not by an extension or CRLF"))
        #expect(outcome.data == Array("abcd".utf8))
    }

    @Test(arguments: ["3\r\nabcX\r\n0\r\n\r\n", "3\r\nabc\rX0\r\n\r\n", "3\r\nabc\n0\r\n\r\n"])
    func refusesChunkDataWithoutCRLF(_ wire: String) {
        let outcome = self.decode(wire)
        #expect(outcome.state == .invalid("chunk data is not followed by CRLF"))
        #expect(outcome.data == Array("abc".utf8))
    }

    @Test(arguments: ["3\nabc\r\n0\r\n\r\n", "3\rabc\r\n0\r\n\r\n", "3;x\nabc\r\n0\r\n\r\n"])
    func refusesASizeLineWithoutCRLF(_ wire: String) {
        #expect(self.isInvalid(self.decode(wire)))
    }

    @Test(arguments: [
        "0\r\nX-Bad : v\r\n\r\n", "0\r\nno colon\r\n\r\n", "0\r\nX-Bad: a\u{0}b\r\n\r\n", "0\r\n folded\r\n\r\n",
        "0\r\nX-A: 1\n\r\n", "0\r\nX-A: 1\rX\r\n\r\n", "0\r\n\n",
    ])
    func refusesAnInvalidTrailerSection(_ wire: String) {
        #expect(self.isInvalid(self.decode(wire)))
    }

    @Test func refusesATrailerSectionOverTheLimit() {
        let line = "X-Big: " + String(repeating: "v", count: 1000) + "\r\n"
        let outcome = self.decode("0\r\n" + String(repeating: line, count: 70) + "\r\n")
        #expect(self.isInvalid(outcome))
    }

    // MARK: incomplete bodies

    /// Cut anywhere before the final CRLF, the message is not complete: not after the last
    /// chunk, not after a trailer line, not after the lone CR of the final line (fuzz seed
    /// 1266339637).
    @Test(arguments: [
        "3\r\nabc\r\n0\r\n", "3\r\nabc\r\n0\r\n\r", "3\r\nabc\r\n0\r\nX-Trailer-Rid: u0n18\r\n\r",
        "3\r\nabc\r\n0\r\nX-Trailer-Rid: u0n18\r\n", "3\r\nabc\r\n", "3\r\nab", "3\r\n", "3", "",
    ])
    func aBodyCutBeforeItsFinalCRLFIsNotComplete(_ wire: String) {
        #expect(self.decode(wire).state == .decoding)
    }
}

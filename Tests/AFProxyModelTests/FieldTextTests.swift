import AFProxyModel
import Testing

@Suite struct FieldTextTests {
    private func roundTrip(_ bytes: [UInt8]) -> (text: String, back: [UInt8]) {
        let text = bytes.withUnsafeBytes { FieldText.decode($0) }
        return (text, FieldText.bytes(text))
    }

    @Test func utf8StaysAsItIs() {
        let (text, back) = self.roundTrip(Array("café crème".utf8))
        #expect(text == "café crème")
        #expect(back == Array("café crème".utf8))
        #expect(FieldText.display(text) == "café crème")
    }

    @Test func latin1BytesComeBackAsTheyCame() {
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65]
        let (text, back) = self.roundTrip(latin1)
        #expect(back == latin1)
        #expect(!text.contains("\u{FFFD}"))
        #expect(FieldText.display(text) == "café crème")
    }

    @Test func validUTF8HoldingAnEscapeScalarIsEscapedToo() {
        let bytes = Array("x\u{F7E9}y".utf8)
        #expect(self.roundTrip(bytes).back == bytes)
    }

    @Test func everyByteSequenceRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in
                UInt8.random(in: 0x20...0xFF, using: &generator)
            }
            #expect(self.roundTrip(bytes).back == bytes)
        }
    }
}

import AFProxyModel
import Testing

@testable import AFProxyCurl

/// Random valid chunked bodies, from a fixed seed: decoded whole and in random pieces they give
/// the data and trailers back, and no proper prefix of one is ever complete.
@Suite struct ChunkedBodyDecoderPropertyTests {
    /// SplitMix64: a seeded generator, so that a failure repeats.
    private struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var z = self.state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private static let extensions = ["", ";a=b", ";name=\"quoted ; value\"", ";flag", " ; x = y", "\t;t"]

    private func body(_ random: inout SeededGenerator) -> (wire: [UInt8], data: [UInt8], trailers: HTTPHeaderList) {
        var wire: [UInt8] = []
        var data: [UInt8] = []
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            let size = Int.random(in: 1...300, using: &random)
            let chunk = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            var line = String(size, radix: 16, uppercase: Bool.random(using: &random))
            if Bool.random(using: &random) { line = "00" + line }
            line += Self.extensions.randomElement(using: &random)!
            wire += Array((line + "\r\n").utf8) + chunk + Array("\r\n".utf8)
            data += chunk
        }
        wire += Array(("0" + Self.extensions.randomElement(using: &random)! + "\r\n").utf8)
        var trailers: HTTPHeaderList = []
        for index in 0..<Int.random(in: 0...2, using: &random) {
            trailers.append(.init("X-T\(index)", "v\(Int.random(in: 0...999, using: &random))"))
            wire += Array("X-T\(index): \(trailers[index].value)\r\n".utf8)
        }
        wire += Array("\r\n".utf8)
        return (wire, data, trailers)
    }

    private func feed(_ wire: ArraySlice<UInt8>, cuts: [Int]) -> (ChunkedBodyDecoder, [UInt8]) {
        var decoder = ChunkedBodyDecoder()
        var data: [UInt8] = []
        var start = wire.startIndex
        for end in cuts.sorted() + [wire.endIndex] where end >= start {
            wire[start..<end].withUnsafeBytes { _ = decoder.decode($0, into: &data) }
            start = end
        }
        return (decoder, data)
    }

    @Test func randomBodiesDecodeInAnyPiecesAndNoPrefixIsComplete() {
        var random = SeededGenerator(state: 22)
        for _ in 0..<300 {
            let (wire, data, trailers) = self.body(&random)
            let cuts = (0..<Int.random(in: 0...8, using: &random)).map { _ in
                Int.random(in: 0...wire.count, using: &random)
            }
            let (decoder, decoded) = self.feed(wire[...], cuts: cuts)
            #expect(decoder.state == .complete)
            #expect(decoded == data)
            #expect(decoder.trailers == trailers)
            let prefix = Int.random(in: 0..<wire.count, using: &random)
            #expect(self.feed(wire[..<prefix], cuts: cuts.filter { $0 < prefix }).0.state == .decoding)
        }
    }
}

import AFProxyWeb
import Testing

@Suite struct WebTokenTests {
    @Test func tokensAreFreshAndLongEnough() {
        let first = WebToken.random()
        let second = WebToken.random()
        #expect(first.utf8.count == 64)
        #expect(
            first.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            })
        #expect(first != second)
    }
}

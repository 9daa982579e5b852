import AFProxyModel
import Testing

@Suite struct FieldWhitespaceTests {
    @Test func spacesAndTabsGoFromBothEnds() {
        #expect(Substring(" \t 42\t ").trimmingSpaces() == "42")
        #expect(Substring("chunked").trimmingSpaces() == "chunked")
        #expect(Substring(" a b ").trimmingSpaces() == "a b")  // inner spaces stay
        #expect(Substring(" \t ").trimmingSpaces() == "")
        #expect(Substring("").trimmingSpaces() == "")
    }

    @Test func otherWhitespaceIsNotOptionalWhitespace() {
        // A line break or a vertical tab in a value is an error for the caller to see, not padding.
        #expect(Substring("\r\n5\u{0B}").trimmingSpaces() == "\r\n5\u{0B}")
        #expect(Substring("\u{A0}5").trimmingSpaces() == "\u{A0}5")
    }

    @Test func listElementsOfAHeaderValue() {
        let value = "gzip ,\tchunked"
        #expect(value.split(separator: ",").map { $0.trimmingSpaces() } == ["gzip", "chunked"])
    }
}

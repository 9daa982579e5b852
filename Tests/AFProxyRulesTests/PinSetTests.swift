import AFProxyModel
import AFProxyRules
import Testing

@Suite struct PinSetTests {
    let a = "sha256//YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="
    let b = "sha256//LiyvBbg87iFYFNlRqria8zOypKHRscUMrbnm8DDvrIg="

    @Test func anExactHostBeforeTheLongestWildcard() throws {
        var pins = PinSet()
        try pins.add("*.example.org \(self.a)")
        try pins.add("*.cdn.example.org \(self.b)")
        try pins.add("Downloads.Example.org \(self.a);\(self.b)")
        #expect(pins.pins(for: "downloads.example.org") == "\(self.a);\(self.b)")
        #expect(pins.pins(for: "x.cdn.example.org") == self.b)
        #expect(pins.pins(for: "www.example.org") == self.a)
        #expect(pins.pins(for: "example.org") == nil)
        #expect(pins.pins(for: "other.net") == nil)
    }

    @Test func linesForOneHostAdd() throws {
        var pins = PinSet()
        try pins.add("h \(self.a)")
        try pins.add("h \(self.b)")
        try pins.add("h \(self.a)")
        #expect(pins.pins(for: "h") == "\(self.a);\(self.b)")
    }

    @Test func refusesWhatIsNotAHostAndPins() {
        for line in [
            "h", "h sha256//short=", "h md5//YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg=", "a b \(self.a)",
            "*.* \(self.a)", "*. \(self.a)", "h/x \(self.a)", "h sha256//YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg!",
        ] {
            var pins = PinSet()
            #expect(throws: PinError.self, "\(line)") { try pins.add(line) }
        }
    }
}

@Suite struct PinSetStandaloneTests {
    static let pin = "sha256//" + String(repeating: "A", count: 43) + "="

    @Test func aStandaloneLineMakesTheHostsPinsDecideAlone() throws {
        var pins = PinSet()
        try pins.add("lan.test \(Self.pin) standalone")
        try pins.add("other.test \(Self.pin)")
        #expect(pins.policy(for: "lan.test")?.pins == Self.pin)
        #expect(pins.policy(for: "lan.test")?.standalone == true)
        #expect(pins.policy(for: "other.test")?.standalone == false)
        #expect(pins.policy(for: "none.test") == nil)
        #expect(throws: PinError.self) { try pins.add("lan.test \(Self.pin) alone") }
        #expect(throws: PinError.self) { try pins.add("lan.test \(Self.pin) standalone extra") }
    }
}

import Testing

@testable import AFProxyCurl

@Suite struct DurationMillisecondsTests {
    @Test func wholeMillisecondsWithTheFractionCutOff() {
        #expect(Duration.zero.milliseconds == 0)
        #expect(Duration.seconds(30).milliseconds == 30_000)
        #expect(Duration.milliseconds(1500).milliseconds == 1500)
        #expect(Duration.microseconds(2999).milliseconds == 2)
        #expect(Duration.nanoseconds(999_999).milliseconds == 0)
    }

    @Test func aYearFitsEasily() {
        // The longest timeouts the configuration accepts are a year.
        #expect(Duration.seconds(86400 * 365).milliseconds == 31_536_000_000)
    }
}

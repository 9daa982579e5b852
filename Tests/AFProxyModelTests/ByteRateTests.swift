import AFProxyModel
import Testing

@Suite struct ByteRateTests {
    @Test func siSuffixesArePowersOfAThousandBinaryOnesOf1024() throws {
        #expect(try ByteRate(parsing: "500K").bytesPerSecond == 500_000)
        #expect(try ByteRate(parsing: "2M").bytesPerSecond == 2_000_000)
        #expect(try ByteRate(parsing: "1G").bytesPerSecond == 1_000_000_000)
        #expect(try ByteRate(parsing: "2mb").bytesPerSecond == 2_000_000)
        #expect(try ByteRate(parsing: "1.5MiB").bytesPerSecond == 1_572_864)
        #expect(try ByteRate(parsing: "64KiB").bytesPerSecond == 65_536)
        #expect(try ByteRate(parsing: "1GiB/s").bytesPerSecond == 1 << 30)
        #expect(try ByteRate(parsing: "750000").bytesPerSecond == 750_000)
        #expect(try ByteRate(parsing: " 0.5k ").bytesPerSecond == 500)
    }

    @Test func badRatesSayWhy() {
        for text in ["", "fast", "1.2.3M", "M", "-1M", "1T", "1 M B"] {
            #expect(throws: ByteRateError.self, "\(text)") { try ByteRate(parsing: text) }
        }
        #expect(throws: ByteRateError(message: "a rate must be at least 1 byte per second, got 0")) {
            try ByteRate(parsing: "0")
        }
        #expect(throws: ByteRateError(message: "a rate must be at most 100G, got 101G")) {
            try ByteRate(parsing: "101G")
        }
    }

    @Test func describedAsItReadsBack() throws {
        for (text, shown) in [
            ("500K", "500K"), ("2M", "2M"), ("1.5MiB", "1.5MiB"), ("1234", "1.234K"), ("999", "999"),
            ("64KiB", "64KiB"),
            ("1.5M", "1.5M"), ("1234567", "1.235M"), ("10G", "10G"),
        ] {
            let rate = try ByteRate(parsing: text)
            #expect(rate.description == shown)
            if shown != "1.235M" { #expect(try ByteRate(parsing: rate.description) == rate) }
        }
    }
}

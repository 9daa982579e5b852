extension UInt8 {
    /// The two lowercase hex digits of the byte, as ASCII bytes, high first.
    package var hexDigits: (high: UInt8, low: UInt8) {
        let digits: StaticString = "0123456789abcdef"
        let base = digits.utf8Start
        return (base[Int(self >> 4)], base[Int(self & 0xF)])
    }

    /// The value of an ASCII hex digit byte (the standard library's, for one byte of a header,
    /// a chunk-size line or a `%XX` escape); nil for any other byte.
    package var hexDigitValue: UInt8? {
        guard self < 0x80, let value = Character(Unicode.Scalar(self)).hexDigitValue else { return nil }
        return UInt8(value)
    }
}

extension Sequence<UInt8> {
    /// Lowercase hex, two digits a byte (a digest, a token).
    package var hexString: String {
        var text: [UInt8] = []
        text.reserveCapacity(self.underestimatedCount * 2)
        for byte in self {
            let (high, low) = byte.hexDigits
            text.append(high)
            text.append(low)
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension UInt8 {
    /// The value of an ASCII hex digit byte (the standard library's, for one byte of a header,
    /// a chunk-size line or a `%XX` escape); nil for any other byte.
    package var hexDigitValue: UInt8? {
        guard self < 0x80, let value = Character(Unicode.Scalar(self)).hexDigitValue else { return nil }
        return UInt8(value)
    }
}

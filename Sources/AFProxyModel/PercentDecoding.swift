/// `%XX` escapes of a URL path segment, a query value or an RFC 8187 parameter, turned back
/// into the bytes they stand for; a `%` not followed by two hex digits stays as it is.
package enum PercentDecoding {
    package static func decode(_ text: some StringProtocol) -> String {
        var bytes: [UInt8] = []
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%"), rest.count >= 2, let high = rest[rest.startIndex].hexDigitValue,
                let low = rest[rest.startIndex + 1].hexDigitValue
            {
                bytes.append(high << 4 | low)
                rest = rest.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Field values and reason phrases from an origin carried as `String` without losing a byte.
///
/// RFC 9110 §5.5 lets a field value hold obs-text (bytes 0x80–0xFF that are not UTF-8, such as a
/// Latin-1 file name), and a proxy must pass those bytes on as they came; decoding them as UTF-8
/// replaced each with U+FFFD. A value that is valid UTF-8 stays as it is; any other value keeps
/// its ASCII bytes and holds each byte from 0x80 up as the private-use scalar U+F700 + byte,
/// which `encode` writes back as that one byte. A valid UTF-8 value that itself holds one of
/// those 128 scalars is escaped byte by byte too, so that decoding and encoding round-trip any
/// byte sequence.
package enum FieldText {
    private static let escapes: ClosedRange<UInt32> = 0xF780...0xF7FF
    /// The UTF-8 lead byte of every escape scalar (EF 9E xx, EF 9F xx).
    private static let escapeLead: UInt8 = 0xEF

    package static func decode(_ bytes: UnsafeRawBufferPointer) -> String {
        if !bytes.contains(where: { $0 >= 0x80 }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        if let text = String(validating: bytes, as: UTF8.self),
            !text.unicodeScalars.contains(where: { Self.escapes.contains($0.value) })
        {
            return text
        }
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            scalars.append(Unicode.Scalar(byte < 0x80 ? UInt32(byte) : 0xF700 + UInt32(byte))!)
        }
        return String(scalars)
    }

    /// Hands the bytes `text` stands for to `write`, in runs.
    package static func encode(_ text: String, _ write: (UnsafeRawBufferPointer) -> Void) {
        var text = text
        if !text.utf8.contains(Self.escapeLead) {
            text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if Self.escapes.contains(scalar.value) {
                bytes.append(UInt8(scalar.value - 0xF700))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        bytes.withUnsafeBytes(write)
    }

    /// The bytes `text` stands for.
    package static func bytes(_ text: String) -> [UInt8] {
        var result: [UInt8] = []
        Self.encode(text) { result.append(contentsOf: $0) }
        return result
    }

    /// `text` for people (task records, logs): an escaped byte shown as the Latin-1 character it
    /// was most likely meant as (obs-text is ISO-8859-1 by history, RFC 7230 §3.2.4).
    package static func display(_ text: String) -> String {
        guard text.utf8.contains(Self.escapeLead) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(Self.escapes.contains(scalar.value) ? Unicode.Scalar(scalar.value - 0xF700)! : scalar)
        }
        return String(scalars)
    }
}

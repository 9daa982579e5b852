/// The user name and password of a `Proxy-Authorization: Basic …` field (RFC 7617). Held only
/// as long as it takes to check them: never logged, never put in a record (the field itself is
/// hop-by-hop and removed before anything is forwarded or recorded).
package struct ProxyCredentials: Sendable, Hashable {
    package var user: String
    package var password: String

    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Nil for a field that is not Basic with `user:password` in base64.
    package init?(header: String) {
        let parts = Substring(header).trimmingSpaces().split(
            separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Base64.decode(parts[1].trimmingSpaces()),
            let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return nil }
        self.user = String(decoding: decoded[..<colon], as: UTF8.self)
        self.password = String(decoding: decoded[(colon + 1)...], as: UTF8.self)
    }

    /// The bytes a cache of verified credentials is keyed by (through a digest of them).
    package var cacheKey: [UInt8] { Array(self.user.utf8) + [0] + Array(self.password.utf8) }
}

/// Standard base64 (RFC 4648 §4), padded; strict: nil for any other byte. Not Foundation's
/// `Data(base64Encoded:)`, which (in the Swift 6.3 toolchain) accepts padding inside the text
/// (`TW=u`) and after the end (`TQ===`), where RFC 4648 §3.3 asks a decoder to reject them:
/// credentials are one of the places where two spellings of one value should not both pass.
package enum Base64 {
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count / 4 * 3)
        var index = 0
        while index < bytes.count {
            var quad: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let byte = bytes[index + offset]
                if byte == UInt8(ascii: "=") && index + 4 == bytes.count && offset >= 2 {
                    padding += 1
                    quad <<= 6
                    continue
                }
                guard padding == 0, let value = Self.value(byte) else { return nil }
                quad = quad << 6 | UInt32(value)
            }
            output.append(UInt8(truncatingIfNeeded: quad >> 16))
            if padding < 2 { output.append(UInt8(truncatingIfNeeded: quad >> 8)) }
            if padding < 1 { output.append(UInt8(truncatingIfNeeded: quad)) }
            index += 4
        }
        return output
    }

    private static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}

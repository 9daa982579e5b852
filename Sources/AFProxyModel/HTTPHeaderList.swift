/// Header fields in the order they were received, names as sent. A plain list rather than a
/// dictionary because a proxy must keep order and repeated fields.
package typealias HTTPHeaderList = [HTTPHeaderField]

package struct HTTPHeaderField: Sendable, Codable, Equatable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// Fields whose values are credentials: what an export shows as `<redacted>` unless asked.
    /// `Set-Cookie` beside the three the client sends, since it hands out the next `Cookie`.
    package static let secretNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    package var isSecret: Bool { Self.secretNames.contains(self.name.lowercased()) }
}

extension HTTPHeaderField {
    /// Compares the name with `lowercaseName` ignoring ASCII case, without allocating: header
    /// lookups run several times per request.
    package func hasName(_ lowercaseName: String) -> Bool {
        let name = self.name.utf8
        let other = lowercaseName.utf8
        guard name.count == other.count else { return false }
        // Native strings (all of ours) have contiguous UTF-8: compare buffers, not iterators.
        if let equal = name.withContiguousStorageIfAvailable({ bytes in
            other.withContiguousStorageIfAvailable { lower in Self.foldedEqual(bytes, lower) }
        }), let equal {
            return equal
        }
        for (byte, lower) in zip(name, other) where Self.fold(byte) != lower { return false }
        return true
    }

    private static func foldedEqual(_ bytes: UnsafeBufferPointer<UInt8>, _ lower: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in 0..<bytes.count where Self.fold(bytes[index]) != lower[index] { return false }
        return true
    }

    @inline(__always)
    private static func fold(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte | 0x20 : byte
    }
}

extension Array where Element == HTTPHeaderField {
    /// The values of every field named `name` (lower-case), compared case-insensitively.
    package func values(_ name: String) -> [String] {
        self.filter { $0.hasName(name) }.map(\.value)
    }

    /// The first value of the field named `name` (lower-case).
    package func first(_ name: String) -> String? {
        self.first { $0.hasName(name) }?.value
    }
}

extension HTTPHeaderField {
    /// A `Name: value` line as a person writes one (`--header`): the name a token, the value
    /// without control bytes; nil otherwise.
    package init?(line: String) {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let field = HTTPHeaderField(String(line[..<colon]), String(line[line.index(after: colon)...].trimmingSpaces()))
        guard field.isWellFormed else { return nil }
        self = field
    }

    /// The name a token and the value free of control bytes (a tab aside): what may be sent as
    /// given by a person (`--header`, an edit at a hold).
    package var isWellFormed: Bool {
        let symbols = Set("!#$%&'*+-.^_`|~".utf8)
        return !self.name.isEmpty
            && self.name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || symbols.contains(byte)
            }
            && !self.value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F })
    }
}

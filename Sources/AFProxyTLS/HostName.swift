#if canImport(Glibc)
import Glibc
#endif

/// A name a leaf certificate is minted for: a DNS name in lower case, or an IP address (its
/// bytes go into an IP SAN, since clients never match an address against a DNS SAN).
enum HostName: Hashable, Sendable {
    case dns(String)
    case ip(String, bytes: [UInt8])

    /// `text` as a client or a CONNECT line gives it: case, a trailing dot and IPv6 brackets
    /// do not make another name.
    init(_ text: String) {
        var name = text.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        while name.hasSuffix(".") { name.removeLast() }
        if let bytes = Self.address(name, family: AF_INET, size: 4) ?? Self.address(name, family: AF_INET6, size: 16) {
            self = .ip(name, bytes: bytes)
        } else {
            self = .dns(name)
        }
    }

    /// The cache's key.
    var key: String {
        switch self {
        case .dns(let name), .ip(let name, _): name
        }
    }

    private static func address(_ text: String, family: Int32, size: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: size)
        let done = bytes.withUnsafeMutableBytes { inet_pton(family, text, $0.baseAddress) }
        return done == 1 ? bytes : nil
    }
}

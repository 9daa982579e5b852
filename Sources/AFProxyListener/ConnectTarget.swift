/// The target of a CONNECT: authority-form `host:port` and nothing else (RFC 9112 §3.2.3). The
/// host is a name, an IPv4 address or a bracketed IPv6 address; the port is required, 1–65535.
struct ConnectTarget: Equatable {
    /// Without the brackets of an IPv6 address.
    var host: String
    var port: Int

    static func parse(_ uri: String) -> Result<ConnectTarget, ProxyRefusal> {
        let shown = String(uri.prefix(64))
        let host: Substring
        let rest: Substring
        if uri.hasPrefix("[") {
            guard let close = uri.firstIndex(of: "]") else {
                return .failure(Self.refusal("an IPv6 address without its closing bracket: \(shown)"))
            }
            host = uri[uri.index(after: uri.startIndex)..<close]
            rest = uri[uri.index(after: close)...]
            guard host.contains(":"), host.utf8.allSatisfy(Self.isIPv6Byte) else {
                return .failure(Self.refusal("not an IPv6 address: \(shown)"))
            }
        } else {
            guard let colon = uri.lastIndex(of: ":") else {
                return .failure(Self.refusal("no port in \(shown)"))
            }
            host = uri[..<colon]
            rest = uri[colon...]
            guard !host.isEmpty, host.utf8.count <= 253, host.utf8.allSatisfy(Self.isNameByte) else {
                return .failure(Self.refusal("not a host name or address: \(shown)"))
            }
        }
        guard rest.first == ":" else { return .failure(Self.refusal("no port in \(shown)")) }
        let digits = rest.dropFirst()
        guard !digits.isEmpty, digits.utf8.count <= 5, digits.utf8.allSatisfy({ (48...57).contains($0) }),
            let port = Int(digits), (1...65535).contains(port)
        else {
            return .failure(Self.refusal("invalid port \(digits.prefix(16)) (1 to 65535)"))
        }
        return .success(ConnectTarget(host: String(host), port: port))
    }

    private static func refusal(_ why: String) -> ProxyRefusal {
        ProxyRefusal(.badRequest, "CONNECT takes host:port (CONNECT example.org:443 HTTP/1.1); \(why)")
    }

    /// Letters, digits, `-`, `.`, `_`: host names (underscores occur in the wild) and IPv4 addresses.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// Hex digits, colons, and dots for an embedded IPv4 address.
    private static func isIPv6Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: ":"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }
}

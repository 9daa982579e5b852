import AFProxyModel
import NIOHTTP1

/// The target of a proxy request: absolute-form, `http://authority/path` (RFC 9112 §3.2.2).
struct AbsoluteURL: Equatable {
    /// `host[:port]`, without userinfo: what `Host` must say.
    var authority: String
    /// The URL as sent upstream; an empty path becomes `/`.
    var text: String
    /// The path and query, from its `/` on.
    var path: String

    /// `scheme`: what the listener proxies (`http`); `https` inside an intercepted connection.
    static func parse(_ uri: String, scheme expected: String = "http") -> Result<AbsoluteURL, ProxyRefusal> {
        guard let separator = Self.schemeSeparator(in: uri) else {
            let shown = String(uri.prefix(64))
            let message: String =
                "this is a proxy: send requests in absolute form (GET http://host/path), for example with "
                + "http_proxy=http://HOST:PORT; \(shown) is not a proxy request"
            return .failure(ProxyRefusal(.badRequest, message))
        }
        let scheme = uri[..<separator.lowerBound]
        guard scheme.utf8.count == expected.utf8.count, scheme.lowercased() == expected else {
            let shown = scheme.isEmpty ? "(none)" : String(scheme.prefix(16))
            return .failure(
                ProxyRefusal(
                    .badRequest,
                    "scheme \(shown) is not proxied: only http:// URLs are (HTTPS goes through CONNECT)"))
        }
        // Delimiters are ASCII, so the UTF-8 view finds them and its indices slice the string;
        // Character-wise scanning (grapheme breaking, Unicode properties) showed in profiles.
        let rest = uri[separator.upperBound...]
        let authorityEnd =
            rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) {
            authority = authority[authority.utf8.index(after: at)...]
        }
        // A host is ASCII (RFC 3986 §3.2.2; internationalized names travel as punycode): no
        // control bytes, spaces, backslashes or raw UTF-8.
        guard !authority.isEmpty, authority.utf8.first != UInt8(ascii: ":"),
            authority.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") })
        else {
            return .failure(ProxyRefusal(.badRequest, "the URL names no valid host: \(uri.prefix(64))"))
        }
        var host = authority
        if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")), authority.utf8.last != UInt8(ascii: "]") {
            let port = authority[authority.utf8.index(after: colon)...]
            guard let number = Int(port), (1...65535).contains(number) else {
                return .failure(ProxyRefusal(.badRequest, "invalid port in URL: \(port.prefix(16))"))
            }
            host = authority[..<colon]
        }
        guard Self.isValidHost(host) else {
            return .failure(
                ProxyRefusal(.badRequest, "the URL's host holds characters no host may hold: \(host.prefix(64))"))
        }
        var path = rest[authorityEnd...]
        if let hash = path.utf8.firstIndex(of: UInt8(ascii: "#")) { path = path[..<hash] }  // fragments are not sent
        let target = path.isEmpty || path.utf8.first == UInt8(ascii: "?") ? "/" + path : String(path)
        let text = "\(expected)://\(authority)\(target)"
        return .success(AbsoluteURL(authority: String(authority), text: text, path: target))
    }

    /// A name of letters, digits, `-`, `.`, `_` and `~` (what curl accepts; a name that resolves
    /// has nothing else), or a bracketed IPv6 literal with an optional zone. Checked here so that
    /// such a request is answered 400 at once instead of becoming a task that curl refuses.
    static func isValidHost(_ host: Substring) -> Bool {
        let bytes = host.utf8
        guard let first = bytes.first else { return false }
        if first == UInt8(ascii: "[") {
            guard bytes.count > 2, bytes.last == UInt8(ascii: "]") else { return false }
            let inner = bytes.dropFirst().dropLast()
            let zone = inner.firstIndex(of: UInt8(ascii: "%"))
            let address = inner[..<(zone ?? inner.endIndex)]
            guard !address.isEmpty,
                address.allSatisfy({ $0.hexDigitValue != nil || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { return false }
            guard let zone else { return true }
            let name = inner[inner.index(after: zone)...]
            return name.count > 2 && name.allSatisfy { Self.isUnreserved($0) || $0 == UInt8(ascii: "%") }
        }
        return bytes.allSatisfy(Self.isUnreserved)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The range of the first `://`, found on the UTF-8 view (`firstRange(of:)` goes through
    /// the string-processing machinery, which costs more than the rest of the parse).
    private static func schemeSeparator(in uri: String) -> Range<String.Index>? {
        let utf8 = uri.utf8
        var index = utf8.startIndex
        while let colon = utf8[index...].firstIndex(of: UInt8(ascii: ":")) {
            let slash1 = utf8.index(after: colon)
            guard slash1 < utf8.endIndex else { return nil }
            let slash2 = utf8.index(after: slash1)
            if utf8[slash1] == UInt8(ascii: "/"), slash2 < utf8.endIndex, utf8[slash2] == UInt8(ascii: "/") {
                return colon..<utf8.index(after: slash2)
            }
            index = slash1
        }
        return nil
    }
}

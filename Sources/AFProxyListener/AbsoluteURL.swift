import NIOHTTP1

/// The target of a proxy request: absolute-form, `http://authority/path` (RFC 9112 §3.2.2).
struct AbsoluteURL: Equatable {
    /// `host[:port]`, without userinfo: what `Host` must say.
    var authority: String
    /// The URL as sent upstream; an empty path becomes `/`.
    var text: String

    static func parse(_ uri: String) -> Result<AbsoluteURL, ProxyRefusal> {
        guard let separator = Self.schemeSeparator(in: uri) else {
            let shown = String(uri.prefix(64))
            let message: String =
                "this is a proxy: send requests in absolute form (GET http://host/path), for example with "
                + "http_proxy=http://HOST:PORT; \(shown) is not a proxy request"
            return .failure(ProxyRefusal(.badRequest, message))
        }
        let scheme = uri[..<separator.lowerBound]
        guard scheme.utf8.count == 4, scheme.lowercased() == "http" else {
            let shown = scheme.isEmpty ? "(none)" : String(scheme.prefix(16))
            return .failure(ProxyRefusal(
                .badRequest,
                "scheme \(shown) is not proxied: only http:// URLs are (HTTPS goes through CONNECT)"))
        }
        // Delimiters are ASCII, so the UTF-8 view finds them and its indices slice the string;
        // Character-wise scanning (grapheme breaking, Unicode properties) cost 1% of the daemon.
        let rest = uri[separator.upperBound...]
        let authorityEnd = rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) { authority = authority[authority.utf8.index(after: at)...] }
        // A host is ASCII (RFC 3986 §3.2.2; internationalized names travel as punycode): no
        // control bytes, spaces, backslashes or raw UTF-8.
        guard !authority.isEmpty, authority.utf8.first != UInt8(ascii: ":"),
            authority.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") })
        else {
            return .failure(ProxyRefusal(.badRequest, "the URL names no valid host: \(uri.prefix(64))"))
        }
        if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")), authority.utf8.last != UInt8(ascii: "]") {
            let port = authority[authority.utf8.index(after: colon)...]
            guard let number = Int(port), (1...65535).contains(number) else {
                return .failure(ProxyRefusal(.badRequest, "invalid port in URL: \(port.prefix(16))"))
            }
        }
        var path = rest[authorityEnd...]
        if let hash = path.utf8.firstIndex(of: UInt8(ascii: "#")) { path = path[..<hash] }  // fragments are not sent
        let target = path.isEmpty || path.utf8.first == UInt8(ascii: "?") ? "/" + path : String(path)
        let text = "http://\(authority)\(target)"
        return .success(AbsoluteURL(authority: String(authority), text: text))
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

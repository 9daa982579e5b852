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
        let scheme = uri[..<separator.lowerBound].lowercased()
        guard scheme == "http" else {
            let shown = scheme.isEmpty ? "(none)" : String(scheme.prefix(16))
            return .failure(ProxyRefusal(
                .badRequest,
                "scheme \(shown) is not proxied: only http:// URLs are (HTTPS goes through CONNECT)"))
        }
        let rest = uri[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        guard !authority.isEmpty, !authority.hasPrefix(":"),
            authority.allSatisfy({ !$0.isWhitespace && $0 != "\\" })
        else {
            return .failure(ProxyRefusal(.badRequest, "the URL names no valid host: \(uri.prefix(64))"))
        }
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            let port = authority[authority.index(after: colon)...]
            guard let number = Int(port), (1...65535).contains(number) else {
                return .failure(ProxyRefusal(.badRequest, "invalid port in URL: \(port.prefix(16))"))
            }
        }
        var path = rest[authorityEnd...]
        if let hash = path.firstIndex(of: "#") { path = path[..<hash] }  // fragments are not sent
        let target = path.isEmpty || path.first == "?" ? "/" + path : String(path)
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

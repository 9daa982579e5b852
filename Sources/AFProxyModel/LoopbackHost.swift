/// Whether a destination is this machine: loopback destinations never wait for the network.
package enum LoopbackHost {
    /// `host` without brackets: `localhost` (and `*.localhost`, RFC 6761), 127.0.0.0/8, `::1`.
    package static func contains(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// The host of an absolute `http(s)://host[:port]/…` URL: after the first `://`, up to the
    /// first `/`, `?` or `#`, without userinfo, brackets or port; nil when there is none.
    ///
    /// Scanned on the UTF-8 view, whose indices slice the string: the delimiters are ASCII. A
    /// request's host is read once, into `ProxyRequest.host`; this is what reads it there.
    package static func host(ofURL url: String) -> String? {
        let utf8 = url.utf8
        var index = utf8.startIndex
        var mark: String.Index?
        while let colon = utf8[index...].firstIndex(of: UInt8(ascii: ":")) {
            let slashes = utf8[utf8.index(after: colon)...].prefix(2)
            if slashes.elementsEqual("//".utf8) {
                mark = slashes.endIndex
                break
            }
            index = utf8.index(after: colon)
        }
        guard let mark else { return nil }
        var rest = url[mark...]
        if let end = rest.utf8.firstIndex(where: {
            $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
        }) {
            rest = rest[..<end]
        }
        if let at = rest.utf8.lastIndex(of: UInt8(ascii: "@")) { rest = rest[rest.utf8.index(after: at)...] }
        if rest.utf8.first == UInt8(ascii: "["), let close = rest.utf8.firstIndex(of: UInt8(ascii: "]")) {
            return String(rest[rest.utf8.index(after: rest.startIndex)..<close])
        }
        if let colon = rest.utf8.lastIndex(of: UInt8(ascii: ":")) { rest = rest[..<colon] }
        return rest.isEmpty ? nil : String(rest)
    }

    /// `host[:port]` of an absolute URL as a `Host` field names it (brackets kept, userinfo
    /// dropped); nil when there is none.
    package static func authority(ofURL url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        let rest = url[url.index(colon, offsetBy: 3)...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return authority.isEmpty ? nil : String(authority)
    }
}

/// Whether a destination is this machine: loopback destinations never wait for the network.
package enum LoopbackHost {
    /// `host` without brackets: `localhost` (and `*.localhost`, RFC 6761), 127.0.0.0/8, `::1`.
    package static func contains(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// The host of an absolute `http(s)://host[:port]/…` URL.
    package static func host(ofURL url: String) -> String? {
        let utf8 = Array(url.utf8)
        guard let mark = (0..<max(0, utf8.count - 2)).first(where: { utf8[$0..<$0 + 3] == Array("://".utf8)[...] })
        else { return nil }
        var rest = Substring(url).dropFirst(mark + 3)
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            return String(rest[rest.index(after: rest.startIndex)..<close])
        }
        if let colon = rest.lastIndex(of: ":") { rest = rest[..<colon] }
        return rest.isEmpty ? nil : String(rest)
    }
}

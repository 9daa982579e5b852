import AFProxyModel

/// The hop-by-hop fields of RFC 9110 §7.6.1, which a proxy consumes rather than forwards: the
/// fixed list plus every field the message's `Connection` header names.
package enum HopByHopHeaders {
    /// Lower-case names. Proxy-Authorization and Proxy-Authenticate belong to this hop as well:
    /// credentials meant for the proxy must not leak to the origin. `Trailer` is end-to-end
    /// (RFC 9110 §6.6.2): it announces the trailer fields, which are passed on.
    package static let fixed: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade",
        "proxy-authorization", "proxy-authenticate",
    ]

    private static let fixedNames = Array(fixed)

    /// `headers` without the hop-by-hop fields. Names are compared in place, without a lower-cased
    /// copy of each: this runs on every request and every response. A list with none of them is
    /// answered as it is, and another is copied once into an array of its final size (filtering
    /// grew one by doubling: five allocations a proxied request).
    package static func removing(from headers: HTTPHeaderList) -> HTTPHeaderList {
        let named = Self.connectionNamed(in: headers)
        guard let first = headers.firstIndex(where: { Self.isHopByHop($0, named: named) }) else { return headers }
        var kept = HTTPHeaderList()
        kept.reserveCapacity(headers.count - 1)
        kept.append(contentsOf: headers[..<first])
        for field in headers[(first + 1)...] where !Self.isHopByHop(field, named: named) { kept.append(field) }
        return kept
    }

    /// The lower-cased names the message's `Connection` and `Proxy-Connection` fields list.
    package static func connectionNamed(in headers: HTTPHeaderList) -> [String] {
        var named: [String] = []
        for field in headers where field.hasName("connection") || field.hasName("proxy-connection") {
            for token in field.value.split(separator: ",") {
                named.append(token.trimmingSpaces().lowercased())
            }
        }
        return named
    }

    /// Whether `field` is hop-by-hop in a message whose `Connection` fields list `named`.
    package static func isHopByHop(_ field: HTTPHeaderField, named: [String]) -> Bool {
        Self.fixedNames.contains(where: field.hasName) || named.contains(where: field.hasName)
    }
}

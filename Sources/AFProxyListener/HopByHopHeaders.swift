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
    /// copy of each: this runs on every request and every response.
    package static func removing(from headers: HTTPHeaderList) -> HTTPHeaderList {
        var named: [String] = []
        for field in headers where field.hasName("connection") || field.hasName("proxy-connection") {
            for token in field.value.split(separator: ",") {
                named.append(token.trimmingSpaces().lowercased())
            }
        }
        return headers.filter { field in
            !Self.fixedNames.contains(where: field.hasName) && !named.contains(where: field.hasName)
        }
    }
}

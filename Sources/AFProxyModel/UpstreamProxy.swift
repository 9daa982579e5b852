import FoundationEssentials

/// The upstream proxy that afproxy's own upstream connections go through (`upstream-proxy`), as
/// tinyproxy's `upstream` and Squid's `cache_peer`: `http://[USER:PASS@]HOST:PORT` or
/// `socks5h://[USER:PASS@]HOST:PORT`. A plain value, so that the config, curl and the tunnel
/// connector read one parse of it.
///
/// The credentials are kept apart and `description` never shows them: it is what logs, status,
/// task records and error messages print.
package struct UpstreamProxy: Sendable, Hashable, CustomStringConvertible {
    package enum Scheme: String, Sendable, Hashable {
        /// An HTTP proxy: absolute-form requests for http, `CONNECT` for everything else.
        case http
        /// SOCKS5 with the name resolved by the proxy (RFC 1928, address type 3): the `h` is
        /// curl's spelling for it, and the only one offered, since resolving here would leak
        /// every name to a network whose policy is to go through the proxy.
        case socks5h
    }

    package struct Credentials: Sendable, Hashable {
        package var user: String
        package var password: String

        package init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    package let scheme: Scheme
    /// A name or an address, without brackets.
    package let host: String
    package let port: Int
    package let credentials: Credentials?

    package init(scheme: Scheme, host: String, port: Int, credentials: Credentials? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    /// Reads the configured value; the error says what is wrong without repeating a password.
    package init(parsing text: String) throws(UpstreamProxyError) {
        guard let mark = text.firstRange(of: "://") else {
            throw UpstreamProxyError("expected http://[USER:PASS@]HOST:PORT or socks5h://…, got no scheme")
        }
        let schemeText = text[..<mark.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            let hint = schemeText == "socks5" ? " (use socks5h: the proxy resolves the names)" : ""
            throw UpstreamProxyError("the scheme must be http or socks5h, not \(schemeText.prefix(20))\(hint)")
        }
        var rest = Substring(text[mark.upperBound...])
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var credentials: Credentials?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = userInfo.firstIndex(of: ":") else {
                throw UpstreamProxyError("expected USER:PASS@ before the host, got a user without a password")
            }
            let user = PercentDecoding.decode(userInfo[..<colon])
            let password = PercentDecoding.decode(userInfo[userInfo.index(after: colon)...])
            guard !user.isEmpty, !user.contains(":") else {
                throw UpstreamProxyError("the user name is empty or holds a colon")
            }
            guard user.utf8.count <= 255, password.utf8.count <= 255 else {
                throw UpstreamProxyError("the user name and password may be 255 bytes each at most")
            }
            credentials = Credentials(user: user, password: password)
        }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            throw UpstreamProxyError("expected only HOST:PORT after the scheme, got a path")
        }
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                throw UpstreamProxyError("expected [ADDRESS]:PORT for an IPv6 proxy")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            portText = rest[rest.index(close, offsetBy: 2)...]
            guard IPAddress(host) != nil else { throw UpstreamProxyError("\(host) is not an IPv6 address") }
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw UpstreamProxyError("expected HOST:PORT, got no port")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, host.utf8.count <= 253, host.utf8.allSatisfy(Self.hostByte) else {
            throw UpstreamProxyError("expected a host name or address, got \(host.prefix(80))")
        }
        guard portText.utf8.count <= 5, let port = Int(portText), (1...65535).contains(port) else {
            throw UpstreamProxyError("expected a port from 1 to 65535, got \(portText.prefix(10))")
        }
        self.init(scheme: scheme, host: String(host), port: port, credentials: credentials)
    }

    /// `HOST:PORT`, an IPv6 address in brackets.
    package var endpoint: String { EndpointText.of(host: self.host, port: self.port) }

    /// `scheme://HOST:PORT`: the proxy as curl takes it (credentials go in options of their own)
    /// and as every person-facing text shows it.
    package var description: String { "\(self.scheme.rawValue)://\(self.endpoint)" }

    /// `Basic BASE64(USER:PASS)` (RFC 7617) for `Proxy-Authorization`, when there are credentials.
    package var basicAuthorization: String? {
        self.credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
    }

    private static func hostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"): true
        default: false
        }
    }
}

package struct UpstreamProxyError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { self.message }
}

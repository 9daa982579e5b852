import AFProxyModel

/// One destination in a rule (throttle, hold, deny/allow, pin): a host name (`example.org`),
/// every name below a domain (`*.example.org`, not the domain itself), every host (`*`), or addresses (`192.0.2.7`,
/// `10.0.0.0/8`, `[2001:db8::1]`, `fd00::/8`). Names compare case-insensitively and without a
/// trailing dot, so the spellings a client may use for one host meet one rule.
package struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    package enum Form: Sendable, Hashable {
        case name(String)
        /// The domain, lower-case, with its leading dot: `.example.org`.
        case below(String)
        case network(IPNetwork)
        /// `*`: every host, named or an address.
        case any
    }

    package let form: Form

    /// Throws the reason a person should read when `text` is none of the forms.
    package init(_ text: some StringProtocol) throws(HostPatternError) {
        let text = String(text)
        if text == "*" {
            self.form = .any
            return
        }
        if let network = IPNetwork(text) {
            self.form = .network(network)
            return
        }
        let lowered = Self.normalize(text)
        let name = lowered.hasPrefix("*.") ? String(lowered.dropFirst(2)) : lowered
        guard !name.isEmpty, name.utf8.count <= 253, !name.hasPrefix("."), !name.contains(".."),
            name.utf8.allSatisfy({ Self.nameByte($0) })
        else {
            throw HostPatternError(
                "expected a host name, *.domain, an address or ADDRESS/LENGTH, got \(text.prefix(80))")
        }
        self.form = lowered.hasPrefix("*.") ? .below("." + name) : .name(name)
    }

    /// Whether the host of a request or tunnel, as the client wrote it, is one this pattern
    /// names. An address pattern matches only an address literal here: a name is checked
    /// against address patterns once it is resolved (`matches(_:IPAddress)`).
    package func matches(host: String) -> Bool {
        switch self.form {
        case .name(let name): return Self.normalize(host) == name
        case .below(let domain): return Self.normalize(host).hasSuffix(domain)
        case .network(let network): return IPAddress(host).map(network.contains) ?? false
        case .any: return true
        }
    }

    package func matches(_ address: IPAddress) -> Bool {
        switch self.form {
        case .network(let network): network.contains(address)
        case .any: true
        case .name, .below: false
        }
    }

    /// Larger is narrower, for "the most specific rule wins": an exact name over any domain,
    /// a longer domain over a shorter one, a longer prefix over a shorter one.
    package var specificity: Int {
        switch self.form {
        case .name: 1000
        case .below(let domain): domain.utf8.count
        case .network(let network): network.prefixLength
        case .any: 0
        }
    }

    package var description: String {
        switch self.form {
        case .name(let name): name
        case .below(let domain): "*" + domain
        case .network(let network):
            network.prefixLength == network.address.bytes.count * 8 ? "\(network.address)" : "\(network)"
        case .any: "*"
        }
    }

    private static func normalize(_ host: some StringProtocol) -> String {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }

    /// Letters, digits, `-`, `_` and dots: what DNS names and the names people give hosts use.
    private static func nameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."): true
        default: false
        }
    }
}

package struct HostPatternError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { self.message }
}

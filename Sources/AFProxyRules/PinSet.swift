import AFProxyModel

/// Public-key pins per host, AFSecurityPolicy's pinning mode for afproxy's own TLS connections:
/// a host with pins accepts only a certificate chain whose leaf key hashes to one of them
/// (curl's `CURLOPT_PINNEDPUBLICKEY`). Config lines `pin = HOST sha256//BASE64[;sha256//BASE64…]
/// [standalone]`, HOST a `HostPattern` (`*.example.org` for every name below example.org); the most
/// specific entry wins.
///
/// `standalone` is AFSSLPinningModePublicKey with invalid certificates allowed: for a host whose
/// certificate chains to no trusted CA (a self-signed device on the LAN), the pin alone decides
/// whom to trust. The name is still checked and a key off the pins still fails: never "no check
/// at all", which only `--insecure` is.
package struct PinSet: Sendable, Equatable {
    package struct Entry: Sendable, Equatable {
        package var pattern: HostPattern
        package var pins: [String]
        /// The chain need not verify: the pins alone decide.
        package var standalone = false
    }

    /// What a connection to one host is held to.
    package struct HostPins: Sendable, Equatable {
        /// curl's form: `sha256//a;sha256//b`.
        package var pins: String
        package var standalone: Bool
    }

    package private(set) var entries: [Entry] = []

    package init() {}

    /// Adds one config line's worth: `HOST sha256//…[;sha256//…]`. Throws the reason a person
    /// should read when the line is not that.
    package mutating func add(_ line: String) throws(PinError) {
        let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2 || (parts.count == 3 && parts[2] == "standalone") else {
            throw PinError("expected HOST sha256//BASE64[;sha256//BASE64…] [standalone], got \(line)")
        }
        let standalone = parts.count == 3
        let pattern: HostPattern
        do throws(HostPatternError) {
            pattern = try HostPattern(parts[0])
        } catch {
            throw PinError(error.message)
        }
        let pins = try Self.parse(String(parts[1]))
        if let index = self.entries.firstIndex(where: { $0.pattern == pattern }) {
            self.entries[index].pins += pins.filter { !self.entries[index].pins.contains($0) }
            // One line of the host's that says standalone makes them all so: its pins decide.
            self.entries[index].standalone = self.entries[index].standalone || standalone
        } else {
            self.entries.append(Entry(pattern: pattern, pins: pins, standalone: standalone))
        }
    }

    /// `sha256//BASE64[;sha256//BASE64…]`: each a SHA-256 (32 bytes, 44 base64 characters).
    package static func parse(_ text: String) throws(PinError) -> [String] {
        let pins = text.split(separator: ";").map { String($0.trimmingSpaces()) }
        guard !pins.isEmpty else { throw PinError("expected sha256//BASE64, got \(text)") }
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for pin in pins {
            let digest = pin.utf8.dropFirst(8)
            guard pin.hasPrefix("sha256//"), digest.count == 44, digest.last == UInt8(ascii: "="),
                digest.dropLast().allSatisfy({ alphabet.contains($0) })
            else { throw PinError("a pin is sha256// and the base64 of a SHA-256 (44 characters), not \(pin)") }
        }
        return pins
    }

    /// The pins of `host` in curl's form (`sha256//a;sha256//b`), nil when it has none: an exact
    /// entry first, else the longest matching wildcard.
    package func pins(for host: String) -> String? {
        self.policy(for: host)?.pins
    }

    /// The pins of `host` and whether they stand alone, nil when it has none.
    package func policy(for host: String) -> HostPins? {
        let best = self.entries.filter { $0.pattern.matches(host: host) }
            .max { $0.pattern.specificity < $1.pattern.specificity }
        return best.map { HostPins(pins: $0.pins.joined(separator: ";"), standalone: $0.standalone) }
    }
}

package struct PinError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { self.message }
}

/// A kind from the configuration only (`pin` lines), asked by each new TLS connection of a
/// download task.
extension PinSet: RuleSet {
    package static let stateFileName: String? = nil
    package var saved: NoSavedRules { NoSavedRules() }
    package mutating func restore(_ saved: NoSavedRules) {}
    package var count: Int { self.entries.count }
}

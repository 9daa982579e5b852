/// How afproxy's own TLS connections to origins (downloads, intercepted requests, `wss://`
/// tunnels) decide whom to trust, AFSecurityPolicy's part: the system's CAs plus `tls-ca-file`.
/// The pins per host are the rule book's pin kind. A rule kind from the configuration only,
/// replaced whole on reload; a connection takes the policy in force when it starts.
package struct SecurityPolicy: Sendable, Equatable {
    /// A CA bundle trusted besides the system's.
    package var caFile: String?

    package init(caFile: String? = nil) {
        self.caFile = caFile
    }
}

/// The trust kind: from the configuration only (`tls-ca-file`), replaced whole on reload.
extension SecurityPolicy: RuleSet {
    package static let stateFileName: String? = nil
    package var saved: NoSavedRules { NoSavedRules() }
    package mutating func restore(_ saved: NoSavedRules) {}
    package var count: Int { self.caFile == nil ? 0 : 1 }
}

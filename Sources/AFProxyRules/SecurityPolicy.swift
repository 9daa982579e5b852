/// How afproxy's own TLS connections (download tasks) decide whom to trust, AFSecurityPolicy's
/// part: the system's CAs plus `tls-ca-file`. The pins per host are the rule book's pin kind.
/// Replaced whole on reload; a connection takes the policy in force when it starts.
package struct SecurityPolicy: Sendable, Equatable {
    /// A CA bundle trusted besides the system's.
    package var caFile: String?

    package init(caFile: String? = nil) {
        self.caFile = caFile
    }
}

/// How afproxy's own TLS connections (download tasks) decide whom to trust, AFSecurityPolicy's
/// part: the system's CAs plus `tls-ca-file`, and public-key pins per host. Replaced whole on
/// reload; a connection takes the policy in force when it starts.
package struct SecurityPolicy: Sendable, Equatable {
    /// A CA bundle trusted besides the system's.
    package var caFile: String?
    package var pins: PinSet

    package init(caFile: String? = nil, pins: PinSet = PinSet()) {
        self.caFile = caFile
        self.pins = pins
    }
}

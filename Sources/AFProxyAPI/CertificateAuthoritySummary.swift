import FoundationEssentials

/// `GET /v1/ca` and `POST /v1/ca/regenerate`: the local CA of HTTPS interception as a person
/// needs it to trust it. Public parts only: the key never travels.
package struct CertificateAuthoritySummary: Sendable, Codable, Equatable {
    /// The PEM certificate file, for `--cacert`, `NODE_EXTRA_CA_CERTS` and the like.
    package var certificatePath: String
    /// "AB:CD:…", as `openssl x509 -noout -fingerprint -sha256` prints it, to compare by eye.
    package var fingerprintSHA256: String
    package var subject: String
    package var notBefore: Date
    package var notAfter: Date
    package var certificatePEM: String

    package init(
        certificatePath: String, fingerprintSHA256: String, subject: String, notBefore: Date, notAfter: Date,
        certificatePEM: String
    ) {
        self.certificatePath = certificatePath
        self.fingerprintSHA256 = fingerprintSHA256
        self.subject = subject
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.certificatePEM = certificatePEM
    }
}

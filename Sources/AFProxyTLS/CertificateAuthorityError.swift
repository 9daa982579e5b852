/// Why the local CA could not be loaded or made: the file and the cause, in words a person can
/// act on (the control API answers it as it is, the daemon logs it).
package struct CertificateAuthorityError: Error, Sendable, Equatable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}

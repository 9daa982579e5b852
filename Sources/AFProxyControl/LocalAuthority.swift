import AFProxyAPI

/// The local CA as the control API uses it: `GET /v1/ca` and adding an intercept rule load it,
/// making it on first use; `POST /v1/ca/regenerate` replaces it. Both block (key generation, file
/// writes) and are called off the event loops. The daemon hands in swift-certificates' CA
/// (`InterceptAuthority`), or `InterceptionNotBuilt` when it was built without interception:
/// this module never links the TLS stack.
package protocol LocalAuthority: Sendable {
    @discardableResult func prepare() throws -> CertificateAuthoritySummary
    @discardableResult func regenerate() throws -> CertificateAuthoritySummary
}

/// The CA of an afproxy built without HTTPS interception (`make run`'s quick first build, which
/// leaves out the TLS stack: two copies of BoringSSL and swift-certificates, about two thirds of
/// a new machine's build): every use says so, and how to get a build that has it. The routes
/// answer 501 rather than 500: nothing is broken, the feature is not there.
package struct InterceptionNotBuilt: LocalAuthority, Error, CustomStringConvertible {
    package init() {}

    package var description: String {
        "this afproxy was built without HTTPS interception (make run's quick first build); "
            + "a build with it: make build, or make run again once make run's background build has finished"
    }

    package func prepare() throws -> CertificateAuthoritySummary { throw self }
    package func regenerate() throws -> CertificateAuthoritySummary { throw self }
}

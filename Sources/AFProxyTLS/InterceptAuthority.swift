import AFProxyAPI
import Logging
import NIOConcurrencyHelpers

/// The local CA of HTTPS interception: loaded from or created in `directory` (`ca-dir`, default
/// STATE/ca) on first use, so nothing is written until a person asks for interception or the CA.
package final class InterceptAuthority: Sendable {
    package let directory: String
    private let logger: Logger
    private let loaded = NIOLockedValueBox<Loaded?>(nil)
    /// Held across a whole load or regeneration (blocking, off the event loops), so two callers
    /// never write the files at once; `loaded` is only held to read or swap.
    private let preparing = NIOLock()

    private struct Loaded: Sendable {
        var summary: CertificateAuthoritySummary
        var tls: InterceptTLS
    }

    package init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// Loads the CA, creating it when the directory has none. Blocking file work and key
    /// generation: call it off the event loops (daemon start, control endpoint). Throws a clear
    /// error naming the file and cause (unreadable key, wrong mode, garbage PEM, unwritable dir).
    @discardableResult package func prepare() throws -> CertificateAuthoritySummary {
        try self.preparing.withLock {
            if let summary = self.summary { return summary }
            let (authority, created) = try CertificateAuthority.loadOrMake(directory: self.directory)
            let summary = try self.install(authority)
            if created {
                self.logger.notice(
                    "created the local CA",
                    metadata: ["path": "\(summary.certificatePath)", "sha256": "\(summary.fingerprintSHA256)"])
            }
            return summary
        }
    }

    /// Replaces the CA (new key, new certificate), drops every minted leaf. Blocking likewise.
    @discardableResult package func regenerate() throws -> CertificateAuthoritySummary {
        try self.preparing.withLock {
            let summary = try self.install(try CertificateAuthority.make(in: self.directory))
            self.logger.notice(
                "replaced the local CA",
                metadata: ["path": "\(summary.certificatePath)", "sha256": "\(summary.fingerprintSHA256)"])
            return summary
        }
    }

    /// nil until `prepare` succeeded. Cheap; called on event loops.
    package var tls: InterceptTLS? { self.loaded.withLockedValue { $0?.tls } }
    package var summary: CertificateAuthoritySummary? { self.loaded.withLockedValue { $0?.summary } }

    private func install(_ authority: CertificateAuthority) throws -> CertificateAuthoritySummary {
        let loaded = Loaded(
            summary: try authority.summary, tls: InterceptTLS(minter: try LeafMinter(authority: authority)))
        self.loaded.withLockedValue { $0 = loaded }
        return loaded.summary
    }
}

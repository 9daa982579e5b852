import AFProxyAPI
import AFProxyTestSupport
import Crypto
import FoundationEssentials
import Logging
import Testing
import X509

@testable import AFProxyTLS

#if canImport(Glibc)
import Glibc
#endif

/// The CA's life on disk: made on first use with the right modes, loaded again unchanged,
/// replaced on demand, and a broken one refused with the file named.
@Suite struct InterceptAuthorityTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func theFirstPrepareMakesTheCAWithItsModes() throws {
        let directory = TemporaryDirectory()
        let caDirectory = directory.path + "/state/ca"
        let authority = InterceptAuthority(directory: caDirectory, logger: self.logger)
        #expect(authority.tls == nil && authority.summary == nil)
        let summary = try authority.prepare()
        #expect(authority.tls != nil && authority.summary == summary)
        #expect(summary.certificatePath == caDirectory + "/ca-cert.pem")
        #expect(directory.mode("state/ca") == 0o700)
        #expect(directory.mode("state/ca/ca-key.pem") == 0o600)
        #expect(directory.mode("state/ca/ca-cert.pem") == 0o644)
        #expect(directory.read("state/ca/ca-cert.pem") == summary.certificatePEM)
        #expect(summary.subject.contains("afproxy local CA ("))
        #expect(summary.subject.contains("O=afproxy"))
        #expect(summary.notAfter.timeIntervalSince(summary.notBefore) > 9 * 365 * 86_400)

        let certificate = try Certificate(pemEncoded: summary.certificatePEM)
        #expect(try certificate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        #expect(try certificate.extensions.keyUsage == KeyUsage(keyCertSign: true, cRLSign: true))
        #expect(certificate.extensions.first { $0.oid == .X509ExtensionID.basicConstraints }?.critical == true)
        #expect(certificate.extensions.first { $0.oid == .X509ExtensionID.keyUsage }?.critical == true)
        #expect(try certificate.extensions.subjectKeyIdentifier != nil)
        // The fingerprint is the SHA-256 of the file's DER, in openssl's spelling.
        let pemBody = summary.certificatePEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let digest = SHA256.hash(data: Data(base64Encoded: pemBody)!)
        #expect(
            summary.fingerprintSHA256
                == digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: ":"))
    }

    @Test func aSecondDaemonLoadsTheSameCA() throws {
        let directory = TemporaryDirectory()
        let first = try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        let again = try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        #expect(again == first)
    }

    @Test func regenerateReplacesTheKeyAndDropsTheLeaves() throws {
        let directory = TemporaryDirectory()
        let authority = InterceptAuthority(directory: directory.path, logger: self.logger)
        let first = try authority.prepare()
        let key = directory.read("ca-key.pem")
        let tls = try #require(authority.tls)
        _ = try tls.makeServerHandler(connectHost: "example.test")
        #expect(tls.leaves.count == 1)
        let second = try authority.regenerate()
        #expect(second.fingerprintSHA256 != first.fingerprintSHA256)
        #expect(directory.read("ca-key.pem") != key)
        #expect(directory.mode("ca-key.pem") == 0o600)
        #expect(authority.tls !== tls && authority.tls?.leaves.count == 0)
        #expect(try InterceptAuthority(directory: directory.path, logger: self.logger).prepare() == second)
    }

    @Test func aGarbageKeyIsRefusedNamingTheFile() throws {
        let directory = TemporaryDirectory()
        try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        directory.write("ca-key.pem", "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n")
        let authority = InterceptAuthority(directory: directory.path, logger: self.logger)
        let error = #expect(throws: CertificateAuthorityError.self) { try authority.prepare() }
        #expect(error?.description == "\(directory.path)/ca-key.pem is not a PEM P-256 private key")
        #expect(authority.tls == nil)
    }

    @Test func aKeyOthersMayReadIsRefused() throws {
        let directory = TemporaryDirectory()
        try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        chmod(directory.path + "/ca-key.pem", 0o644)
        let error = #expect(throws: CertificateAuthorityError.self) {
            try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        }
        #expect(error?.description.contains("ca-key.pem has mode 644") == true)
    }

    @Test func aCertificateOfAnotherKeyIsRefused() throws {
        let directory = TemporaryDirectory()
        try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        let other = TemporaryDirectory()
        let foreign = try InterceptAuthority(directory: other.path, logger: self.logger).prepare()
        directory.write("ca-cert.pem", foreign.certificatePEM, mode: 0o644)
        let error = #expect(throws: CertificateAuthorityError.self) {
            try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        }
        #expect(error?.description.contains("does not belong to the key beside it") == true)
    }

    @Test func aGarbageCertificateOrAMissingOneIsRefused() throws {
        let directory = TemporaryDirectory()
        try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        directory.write("ca-cert.pem", "hello", mode: 0o644)
        let garbage = #expect(throws: CertificateAuthorityError.self) {
            try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        }
        #expect(garbage?.description == "\(directory.path)/ca-cert.pem is not a PEM certificate")
        unlink(directory.path + "/ca-cert.pem")
        let missing = #expect(throws: CertificateAuthorityError.self) {
            try InterceptAuthority(directory: directory.path, logger: self.logger).prepare()
        }
        #expect(missing?.description.contains("ca-cert.pem is missing beside") == true)
    }

    @Test func aDirectoryThatCannotBeMadeIsNamed() throws {
        let directory = TemporaryDirectory()
        directory.write("file", "x")
        let error = #expect(throws: CertificateAuthorityError.self) {
            try InterceptAuthority(directory: directory.path + "/file/ca", logger: self.logger).prepare()
        }
        #expect(error?.description.hasPrefix("cannot read \(directory.path)/file/ca/ca-key.pem") == true)
    }
}

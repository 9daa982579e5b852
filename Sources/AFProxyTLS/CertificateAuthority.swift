import AFProxyAPI
import Crypto
import FoundationEssentials
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#endif

/// The local CA as it is in memory: its key, its certificate, and what a person is shown of it.
/// Made once per load or regeneration; the files are `CertificateAuthority+Files`'s business.
struct CertificateAuthority: Sendable {
    /// Ten years: the CA is trusted by hand, so it should not expire under a person's feet.
    static let lifetime: TimeInterval = 3650 * 86_400

    let key: P256.Signing.PrivateKey
    let certificate: Certificate
    let certificatePEM: String
    let certificatePath: String

    /// Checks that `key` is the key of `certificate` and that the certificate can sign leaves.
    init(key: P256.Signing.PrivateKey, certificate: Certificate, certificatePath: String) throws {
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw CertificateAuthorityError(
                "\(certificatePath) does not belong to the key beside it; "
                    + "run afproxyctl ca --regenerate to make a new CA")
        }
        self.key = key
        self.certificate = certificate
        self.certificatePEM = try certificate.serializeAsPEM().pemString + "\n"
        self.certificatePath = certificatePath
    }

    /// A new CA named after this machine and today.
    static func make(certificatePath: String, now: Date = Date()) throws -> CertificateAuthority {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let commonName = "afproxy local CA (\(Self.machineName()), \(Self.day(now)))"
        let name = try DistinguishedName {
            OrganizationName("afproxy")
            CommonName(commonName)
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now - 3600, notValidAfter: now + Self.lifetime, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        return try CertificateAuthority(key: key, certificate: certificate, certificatePath: certificatePath)
    }

    /// The certificate's DER bytes.
    var certificateDER: [UInt8] {
        get throws {
            var serializer = DER.Serializer()
            try serializer.serialize(self.certificate)
            return serializer.serializedBytes
        }
    }

    var summary: CertificateAuthoritySummary {
        get throws {
            let fingerprint = SHA256.hash(data: try self.certificateDER)
                .map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true) }
                .joined(separator: ":")
            return CertificateAuthoritySummary(
                certificatePath: self.certificatePath, fingerprintSHA256: fingerprint,
                subject: String(describing: self.certificate.subject), notBefore: self.certificate.notValidBefore,
                notAfter: self.certificate.notValidAfter, certificatePEM: self.certificatePEM)
        }
    }

    /// The key identifier leaves name as their authority's.
    var keyIdentifier: ArraySlice<UInt8> {
        (try? self.certificate.extensions.subjectKeyIdentifier)??.keyIdentifier
            ?? SubjectKeyIdentifier(hash: self.certificate.publicKey).keyIdentifier
    }

    private static func machineName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown host" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "unknown host" : name
    }

    /// `now` as YYYY-MM-DD in UTC.
    private static func day(_ now: Date) -> String {
        var seconds = time_t(now.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }
}

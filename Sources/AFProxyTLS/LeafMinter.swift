import Crypto
import FoundationEssentials
import NIOSSL
import SwiftASN1
import X509

/// Signs leaf certificates with the CA's key. Every leaf of one CA and kind shares one key
/// (`LeafKey`, kept in memory only): a key per leaf would cost a key generation per new name for
/// no gain, since a person who can read this process's memory can read the CA key too.
struct LeafMinter: Sendable {
    /// Browsers refuse server certificates valid for longer than 398 days; one day back covers
    /// clocks a little behind.
    static let lifetime: TimeInterval = 397 * 86_400
    static let backdating: TimeInterval = 86_400

    private let issuerKey: Certificate.PrivateKey
    private let issuer: DistinguishedName
    private let issuerKeyIdentifier: ArraySlice<UInt8>
    private let issuerNotAfter: Date
    private(set) var leafKey: LeafKey
    /// The leaves' key as NIOSSL serves it.
    var privateKey: NIOSSLPrivateKey { self.leafKey.privateKey }

    init(authority: CertificateAuthority, key: LeafKey? = nil) throws {
        self.issuerKey = Certificate.PrivateKey(authority.key)
        self.issuer = authority.certificate.subject
        self.issuerKeyIdentifier = authority.keyIdentifier
        self.issuerNotAfter = authority.certificate.notValidAfter
        self.leafKey = try key ?? LeafKey.p256()
    }

    /// The same CA's minter for leaves with `key`.
    func with(_ key: LeafKey) -> LeafMinter {
        var minter = self
        minter.leafKey = key
        return minter
    }

    /// A certificate for `name`, as X.509 and as NIOSSL serves it.
    func mint(_ name: HostName, now: Date = Date()) throws -> (Certificate, NIOSSLCertificate) {
        let alternative: GeneralName
        switch name {
        case .dns(let text): alternative = .dnsName(text)
        case .ip(_, let bytes): alternative = .ipAddress(ASN1OctetString(contentBytes: bytes[...]))
        }
        // A CN is at most 64 characters; clients read the SAN anyway.
        let commonName = name.key.utf8.count <= 64 ? name.key : nil
        let subject = try DistinguishedName {
            OrganizationName("afproxy")
            if let commonName { CommonName(commonName) }
        }
        let notBefore = now - Self.backdating
        let notAfter = min(notBefore + Self.lifetime, self.issuerNotAfter)
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: self.leafKey.publicKey, notValidBefore: notBefore,
            notValidAfter: notAfter, issuer: self.issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                // RSA key exchange (TLS_RSA_* suites, which the oldest clients offer) encrypts to the key.
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: self.leafKey.kind == .rsa))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([alternative])
                AuthorityKeyIdentifier(keyIdentifier: self.issuerKeyIdentifier)
            },
            issuerPrivateKey: self.issuerKey)
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return (certificate, try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der))
    }
}

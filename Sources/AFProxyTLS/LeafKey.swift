import Crypto
import NIOSSL
import X509
import _CryptoExtras

/// The key every leaf of one kind shares, kept in memory only: P-256 for every client that can
/// take it, RSA for the older ones whose hello offers no ECDSA (TLS 1.2 stacks with RSA suites
/// only, embedded clients), as mitmproxy and Squid serve.
struct LeafKey: Sendable {
    let kind: LeafKeyKind
    let publicKey: Certificate.PublicKey
    /// The key as NIOSSL serves it.
    let privateKey: NIOSSLPrivateKey

    static func p256() throws -> LeafKey {
        let key = P256.Signing.PrivateKey()
        return LeafKey(
            kind: .ecdsa, publicKey: Certificate.PublicKey(key.publicKey),
            privateKey: try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
    }

    /// Blocking: a 2048-bit RSA key takes from a tenth of a second to seconds to generate, so
    /// it is made off the event loops, once, on the first client that needs it.
    static func rsa() throws -> LeafKey {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return LeafKey(
            kind: .rsa, publicKey: Certificate.PublicKey(key.publicKey),
            privateKey: try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
    }
}

/// Which key a leaf carries.
package enum LeafKeyKind: String, Sendable {
    case ecdsa
    case rsa
}

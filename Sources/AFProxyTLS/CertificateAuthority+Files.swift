import AFProxyStore
import Crypto
import FoundationEssentials
import X509

#if canImport(Glibc)
import Glibc
#endif

/// The CA's two files in `ca-dir`: `ca-key.pem` (0600; whoever reads it can read every
/// intercepted connection) and `ca-cert.pem` (0644, the file people install). Blocking I/O.
extension CertificateAuthority {
    static let keyFile = "ca-key.pem"
    static let certificateFile = "ca-cert.pem"

    /// The CA in `directory`, made and written there when the directory has none.
    static func loadOrMake(directory: String) throws -> (authority: CertificateAuthority, created: Bool) {
        let keyPath = directory + "/" + Self.keyFile
        let certificatePath = directory + "/" + Self.certificateFile
        let keyText = try Self.read(keyPath)
        let certificateText = try Self.read(certificatePath)
        switch (keyText, certificateText) {
        case (nil, nil):
            return (try Self.make(in: directory), true)
        case (.some, nil):
            throw CertificateAuthorityError(
                "\(certificatePath) is missing beside \(keyPath); run afproxyctl ca --regenerate to make a new CA")
        case (nil, .some):
            throw CertificateAuthorityError(
                "\(keyPath) is missing beside \(certificatePath); run afproxyctl ca --regenerate to make a new CA")
        case (.some(let keyText), .some(let certificateText)):
            try Self.checkMode(keyPath)
            let key: P256.Signing.PrivateKey
            do {
                key = try P256.Signing.PrivateKey(pemRepresentation: keyText)
            } catch {
                throw CertificateAuthorityError("\(keyPath) is not a PEM P-256 private key")
            }
            let certificate: Certificate
            do {
                certificate = try Certificate(pemEncoded: certificateText)
            } catch {
                throw CertificateAuthorityError("\(certificatePath) is not a PEM certificate")
            }
            return (
                try CertificateAuthority(key: key, certificate: certificate, certificatePath: certificatePath), false
            )
        }
    }

    /// A new CA written to `directory` (created 0700), replacing any there.
    static func make(in directory: String) throws -> CertificateAuthority {
        let certificatePath = directory + "/" + Self.certificateFile
        let authority = try Self.make(certificatePath: certificatePath)
        do throws(FileError) {
            try Files.makeDirectory(directory)
            // `Files.replace` creates 0600 files: right for the key; the certificate is public.
            try Files.replace(directory + "/" + Self.keyFile, with: Data(authority.key.pemRepresentation.utf8))
            try Files.replace(certificatePath, with: Data(authority.certificatePEM.utf8))
            guard chmod(certificatePath, 0o644) == 0 else {
                throw FileError(operation: "set the mode of", path: certificatePath, code: errno)
            }
        } catch {
            throw CertificateAuthorityError(error.description)
        }
        return authority
    }

    private static func read(_ path: String) throws -> String? {
        do throws(FileError) {
            guard let data = try Files.contents(of: path) else { return nil }
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw CertificateAuthorityError(error.description)
        }
    }

    /// A key others may read is refused, as ssh refuses one: it must be the owner's alone.
    private static func checkMode(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw CertificateAuthorityError(FileError(operation: "stat", path: path, code: errno).description)
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw CertificateAuthorityError(
                "\(path) has mode \(String(mode, radix: 8)), readable by others; "
                    + "it must be 0600 (chmod 600 \(path))")
        }
    }
}

import AFProxyModel
import CCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The SHA-256 of a file, read once from its start, as lowercase hex.
package enum FileDigest {
    package static func sha256(of descriptor: Int32) throws(FileError) -> String {
        guard let context = EVP_MD_CTX_new() else { throw FileError(operation: "hash", path: "", code: ENOMEM) }
        defer { EVP_MD_CTX_free(context) }
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
        let size = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var offset: off_t = 0
        while true {
            let count = pread(descriptor, buffer, size, offset)
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(operation: "read", path: "", code: errno)
            }
            if count == 0 { break }
            EVP_DigestUpdate(context, buffer, count)
            offset += off_t(count)
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return digest.prefix(Int(length)).hexString
    }
}

import AFProxyRules
import CCrypt
import CCrypto

/// crypt(5) through libxcrypt's `crypt_rn`, and the SHA-256 that keys the cache of verified
/// credentials. Checking a password is slow on purpose (yescrypt and bcrypt take tens of
/// milliseconds): never call `matches` on an event loop. The daemon hands it to the listener's
/// `ProxyAuthenticator` as its `PasswordHashing`.
package struct PasswordHash: PasswordHashing {
    package init() {}

    package func matches(password: String, hash: String) -> Bool {
        Self.matches(password: password, hash: hash)
    }

    package func digest(_ bytes: [UInt8]) -> [UInt8] { Self.sha256(bytes) }

    /// Whether `password` hashes to `hash` with the scheme and salt `hash` names. The two are
    /// compared in constant time.
    package static func matches(password: String, hash: String) -> Bool {
        let size = MemoryLayout<crypt_data>.size
        let data = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { data.deallocate() }
        data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        guard let result = crypt_rn(password, hash, data, Int32(size)) else { return false }
        let computed = Array(String(cString: result).utf8)
        let expected = Array(hash.utf8)
        guard computed.count == expected.count, computed.first != UInt8(ascii: "*") else { return false }
        var difference: UInt8 = 0
        for index in computed.indices { difference |= computed[index] ^ expected[index] }
        return difference == 0
    }

    package static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = bytes.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha256(), nil)
        }
        return Array(digest.prefix(Int(length)))
    }
}

/// The slow, salted check of a password against its crypt(5) hash, and the digest a cache of
/// verified credentials is keyed by. The store's `PasswordHash` (libxcrypt, libcrypto) is the
/// one the daemon hands in, so that the rules and the listener that asks them link no C library
/// of their own and need nothing of the store.
package protocol PasswordHashing: Sendable {
    /// Whether `password` hashes to `hash` with the scheme and salt `hash` names, compared in
    /// constant time. Slow on purpose (tens of milliseconds): never on an event loop.
    func matches(password: String, hash: String) -> Bool
    /// A SHA-256 of `bytes`: what the cache keeps instead of a password.
    func digest(_ bytes: [UInt8]) -> [UInt8]
}

import AFProxyModel

/// The users of `proxy-auth-file`: one `user:hash` a line, `#` comments and blank lines
/// ignored, the hash in crypt(5)'s modular format. Only schemes that are slow on purpose and
/// still recommended are taken (yescrypt, gost-yescrypt, scrypt, bcrypt, sha512crypt,
/// sha256crypt); DES, MD5 and the other legacy ones are refused when the file is read, so a
/// weak hash never guards the proxy.
package struct ProxyUsers: Sendable, Hashable {
    /// The hash of each user.
    package private(set) var hashes: [String: String]

    package init(_ hashes: [String: String] = [:]) {
        self.hashes = hashes
    }

    /// The prefixes of the schemes taken, with their names for messages.
    package static let acceptedSchemes: [(prefix: String, name: String)] = [
        ("$y$", "yescrypt"), ("$gy$", "gost-yescrypt"), ("$7$", "scrypt"), ("$2b$", "bcrypt"), ("$2y$", "bcrypt"),
        ("$2a$", "bcrypt"), ("$6$", "sha512crypt"), ("$5$", "sha256crypt"),
    ]

    /// Throws the first bad line, numbered, with what is wrong with it.
    package init(parsing text: String) throws(ProxyUsersError) {
        var hashes: [String: String] = [:]
        // `\r\n` is one Character in Swift: split on any line break, not on "\n".
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingSpaces()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let number = index + 1
            guard let colon = line.firstIndex(of: ":") else {
                throw ProxyUsersError(line: number, "expected user:hash")
            }
            let user = String(line[..<colon])
            let hash = String(line[line.index(after: colon)...])
            guard !user.isEmpty else { throw ProxyUsersError(line: number, "the user name is empty") }
            guard hashes[user] == nil else { throw ProxyUsersError(line: number, "user \(user) is listed twice") }
            if let refusal = Self.schemeRefusal(hash) { throw ProxyUsersError(line: number, refusal) }
            hashes[user] = hash
        }
        self.hashes = hashes
    }

    /// Why `hash` is not taken, nil when it is.
    package static func schemeRefusal(_ hash: String) -> String? {
        if Self.acceptedSchemes.contains(where: { hash.hasPrefix($0.prefix) }) {
            return hash.utf8.count > 20 ? nil : "the hash is too short to be one"
        }
        let legacy: String
        if hash.hasPrefix("$1$") {
            legacy = "MD5-crypt ($1$)"
        } else if hash.hasPrefix("$") {
            legacy = "the $\(hash.dropFirst().prefix { $0 != "$" }.prefix(8))$ scheme"
        } else {
            legacy = "a DES crypt or plain text"
        }
        return
            "\(legacy) is not taken: use yescrypt (mkpasswd -m yescrypt), bcrypt or sha512crypt (openssl passwd -6)"
    }
}

package struct ProxyUsersError: Error, Sendable, Equatable, CustomStringConvertible {
    package var line: Int
    package var message: String

    package init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }

    package var description: String { "line \(self.line): \(self.message)" }
}

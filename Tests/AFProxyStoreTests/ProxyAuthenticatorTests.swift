import AFProxyModel
import AFProxyRules
import AFProxyStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ProxyAuthenticatorTests {
    /// `openssl passwd -6 -salt saltsalt secret`, Python's crypt with yescrypt and bcrypt.
    static let sha512 =
        "$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1"
    static let yescrypt = "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$GmcwIgvdUC9qLWcKCi6gklUa1dM3ziD43YxYNURLKy0"
    static let bcrypt = "$2b$05$Urt1JXzCgjnus4P0TU4ktOuZpkhRHcRSQz/qN1OfFeSkaDmmfGWr6"

    @Test(arguments: [sha512, yescrypt, bcrypt])
    func theSystemsCryptChecksEachScheme(hash: String) {
        #expect(PasswordHash.matches(password: "secret", hash: hash))
        #expect(!PasswordHash.matches(password: "Secret", hash: hash))
        #expect(!PasswordHash.matches(password: "", hash: hash))
    }

    @Test func aGarbledHashMatchesNothing() {
        #expect(!PasswordHash.matches(password: "secret", hash: "$y$garbage"))
        #expect(!PasswordHash.matches(password: "secret", hash: "*"))
    }

    private static func header(_ user: String, _ password: String) -> String {
        let text = Array("\(user):\(password)".utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < text.count {
            let chunk = Array(text[index..<min(index + 3, text.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * $1.offset) }
            for position in 0...3 {
                out.append(
                    position <= chunk.count ? alphabet[Int(value >> (18 - 6 * position) & 63)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return "Basic " + String(decoding: out, as: UTF8.self)
    }

    @Test func verdictsAndTheCacheOfVerifiedCredentials() {
        let authenticator = ProxyAuthenticator(
            users: ProxyUsers(["alice": Self.sha512, "bob": Self.bcrypt]), hashing: PasswordHash())
        #expect(authenticator.verdict(header: nil) == .refused("proxy authentication required"))
        guard case .refused = authenticator.verdict(header: "Bearer x") else {
            Issue.record("a Bearer token is not Basic credentials")
            return
        }
        let right = Self.header("alice", "secret")
        guard case .needsVerification(let credentials) = authenticator.verdict(header: right) else {
            Issue.record("new credentials need the slow check")
            return
        }
        #expect(authenticator.verify(credentials))
        #expect(authenticator.verdict(header: right) == .allowed(user: "alice"))

        // Wrong ones are never remembered as a success; an unknown user fails as well.
        let wrong = ProxyCredentials(user: "alice", password: "guess")
        #expect(!authenticator.verify(wrong))
        #expect(authenticator.verdict(header: Self.header("alice", "guess")) == .needsVerification(wrong))
        #expect(!authenticator.verify(ProxyCredentials(user: "mallory", password: "secret")))
        // Bob's password is not Alice's.
        #expect(!authenticator.verify(ProxyCredentials(user: "alice", password: "secret2")))

        // A reload forgets what was verified: a user taken out is refused at once.
        authenticator.replace(ProxyUsers(["bob": Self.bcrypt]))
        #expect(authenticator.verdict(header: right) == .needsVerification(credentials))
        #expect(!authenticator.verify(credentials))
    }

    @Test func theFileIsReadWithItsPermissionsChecked() throws {
        let path = "/tmp/afproxy-auth-test-\(getpid())"
        defer { unlink(path) }
        let write = { (text: String, mode: mode_t) in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
            _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
            fchmod(fd, mode)
            close(fd)
        }
        write("alice:\(Self.yescrypt)\n", 0o600)
        let restricted = try ProxyAuthFile.load(path: path)
        #expect(restricted.users.hashes == ["alice": Self.yescrypt])
        #expect(restricted.warning == nil)
        write("alice:\(Self.yescrypt)\n", 0o644)
        #expect(try ProxyAuthFile.load(path: path).warning?.contains("readable by every user") == true)
        write("alice:$1$abc$iCQ2D3nhptRYi27fDYv2s1\n", 0o600)
        #expect(throws: ProxyAuthFileError.self) { try ProxyAuthFile.load(path: path) }
        write("# nobody\n", 0o600)
        #expect(throws: ProxyAuthFileError("proxy-auth-file \(path): names no user")) {
            try ProxyAuthFile.load(path: path)
        }
        #expect(throws: ProxyAuthFileError.self) { try ProxyAuthFile.load(path: path + ".missing") }
    }
}

import AFProxyModel
import AFProxyStore
import AFProxyTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A map-local rule's file is served only when the rule's author could read it: the file's bits
/// and every directory above where it really lies, as that author.
@Suite struct LocalFileReaderTests {
    /// Someone who owns nothing here and is in none of its groups.
    private let stranger = ReadRights.user(uid: getuid() &+ 4242, groups: [getgid() &+ 4242])

    private func load(_ path: String, as rights: ReadRights) -> Result<[UInt8], LocalFileReader.Failure> {
        let result = Locked<Result<[UInt8], LocalFileReader.Failure>?>(nil)
        LocalFileReader().load(path, as: rights) { got in result.withLock { $0 = got } }
        for _ in 0..<3000 where result.withLock({ $0 }) == nil { usleep(10_000) }  // a deadline, not a timing check
        return result.withLock { $0 } ?? .failure(.unreadable("no answer in 30 s"))
    }

    @Test func aFileItsAuthorMayReadIsServed() throws {
        let dir = TemporaryDirectory("map-local")
        chmod(dir.path, 0o755)
        dir.write("open.json", "{}", mode: 0o644)
        #expect(try self.load(dir.path + "/open.json", as: self.stranger).get() == Array("{}".utf8))
        #expect(try self.load(dir.path + "/open.json", as: .anyone).get() == Array("{}".utf8))
    }

    @Test func aPrivateFileOrDirectoryIsRefusedToOthersAndServedToTheDaemon() throws {
        let dir = TemporaryDirectory("map-local")
        chmod(dir.path, 0o755)
        dir.write("key.pem", "secret", mode: 0o600)
        let refused = self.load(dir.path + "/key.pem", as: self.stranger)
        #expect(refused == .failure(.forbidden("\(dir.path)/key.pem: uid \(getuid() &+ 4242) may not read it")))
        #expect(
            self.load(dir.path + "/key.pem", as: .anyone)
                == .failure(.forbidden("\(dir.path)/key.pem: anyone may not read it")))
        #expect(try self.load(dir.path + "/key.pem", as: .daemon).get() == Array("secret".utf8))

        dir.write("open.txt", "x", mode: 0o644)
        chmod(dir.path, 0o700)  // a readable file in a directory the author may not enter
        #expect(
            self.load(dir.path + "/open.txt", as: self.stranger)
                == .failure(.forbidden("\(dir.path)/open.txt: uid \(getuid() &+ 4242) may not reach it")))
    }

    @Test func aLinkIsJudgedWhereItsFileLies() throws {
        let secrets = TemporaryDirectory("map-local-state")
        chmod(secrets.path, 0o700)
        secrets.write("ca.key", "secret", mode: 0o644)  // readable itself, but behind a closed directory
        let site = TemporaryDirectory("map-local-site")
        chmod(site.path, 0o755)
        symlink(secrets.path + "/ca.key", site.path + "/logo.png")
        #expect(
            self.load(site.path + "/logo.png", as: .anyone)
                == .failure(.forbidden("\(site.path)/logo.png: anyone may not reach it")))
        #expect(try self.load(site.path + "/logo.png", as: .daemon).get() == Array("secret".utf8))
    }

    @Test func theKernelsViewsAreNeverServedForOthers() {
        guard case .failure(.forbidden(let reason)) = self.load("/proc/self/environ", as: .anyone) else {
            Issue.record("/proc/self/environ served for anyone")
            return
        }
        #expect(reason.contains("the kernel's view"))
    }
}

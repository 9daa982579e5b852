import AFProxyAPI
import FoundationEssentials
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The control socket's address, by hand: a connect answers its errno, a path too long for an
/// address is refused before any system call, and a bound socket names its path.
@Suite struct UnixSocketAddressTests {
    @Test func aBoundSocketNamesItsPathAndAcceptsAConnect() throws {
        let path = "/tmp/afproxy-unix-\(getpid()).sock"
        unlink(path)
        defer { unlink(path) }
        let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(server) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0 && listen(server, 1) == 0)
        #expect(UnixSocketAddress.boundPath(of: server) == path)

        let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        #expect(UnixSocketAddress.connect(client, to: path) == 0)
    }

    @Test func aMissingSocketAndAPathTooLongAnswerTheirErrors() {
        let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        #expect(UnixSocketAddress.connect(client, to: "/tmp/afproxy-no-such-\(getpid()).sock") == ENOENT)
        let long = "/tmp/" + String(repeating: "x", count: UnixSocketAddress.maxPathLength)
        #expect(UnixSocketAddress.connect(client, to: long) == ENAMETOOLONG)
        #expect(UnixSocketAddress.maxPathLength == 107)
        let pipe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(pipe) }
        #expect(UnixSocketAddress.boundPath(of: pipe) == nil)
    }
}

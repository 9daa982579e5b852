import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyNetwork

#if canImport(Glibc)
import Glibc
#endif

/// The finder against a real loopback connection whose both ends this test process holds.
/// No unit test may start a process: until its exec, a child holds the test process's sockets
/// too, and the finder, which looks at the newest processes first, names the child.
@Suite struct ClientProcessFinderTests {
    @Test func findsTheProcessHoldingTheClientsEnd() throws {
        let connection = try LoopbackConnection()
        let finder = ClientProcessFinder(unit: { _ in "test.scope" }, skipsOwnProcess: false)
        let process = finder.find(connection.addresses)
        #expect(process?.pid == Int(getpid()))
        let exe = ProcFS.link("/proc/self/exe")
        #expect(exe != nil && process?.executable == exe)
        #expect(process?.uid == Int(geteuid()))
        #expect(process?.unit == "test.scope")
        #expect(process?.commandLine?.isEmpty == false)
        // Found again from the processes found lately, without a scan of the others.
        let again = finder.find(connection.addresses)
        #expect(again == process)
    }

    @Test func theTablesFindItWithoutTheKernelsDiagnostics() throws {
        let connection = try LoopbackConnection()
        let finder = ClientProcessFinder(unit: { _ in nil }, skipsOwnProcess: false, asksTheKernel: false)
        #expect(finder.find(connection.addresses)?.pid == Int(getpid()))
    }

    @Test func theKernelAnswersWithTheClientsSocket() throws {
        let connection = try LoopbackConnection()
        let diag = try #require(SockDiagSocket())
        let plain = connection.addresses.unmapped
        let found = diag.socket(client: plain.peer, server: plain.local)
        let table = String(decoding: ProcFS.read("/proc/self/net/tcp") ?? [], as: UTF8.self)
        let entry = SocketTable.find(client: plain.peer, server: plain.local, in: table)
        #expect(found != nil && found?.inode == entry?.inode && found?.uid == entry?.uid)
        // The accepted end is another socket; a port nobody uses is none.
        #expect(diag.socket(client: plain.local, server: plain.peer)?.inode != found?.inode)
        var nobody = plain.peer
        nobody.port = plain.peer.port == 1 ? 2 : 1
        #expect(diag.socket(client: nobody, server: plain.local) == nil)
    }

    @Test func aSignalDuringTheQuestionIsNoMissingAnswer() throws {
        let connection = try LoopbackConnection()
        var interruptions = 2
        // What a signal handler or a stop and continue does to a blocked recv: -1 and EINTR.
        let diag = try #require(
            SockDiagSocket { descriptor, buffer in
                interruptions -= 1
                if interruptions >= 0 {
                    errno = EINTR
                    return -1
                }
                return recv(descriptor, buffer.baseAddress, buffer.count, 0)
            })
        let plain = connection.addresses.unmapped
        let found = diag.socket(client: plain.peer, server: plain.local)
        let table = String(decoding: ProcFS.read("/proc/self/net/tcp") ?? [], as: UTF8.self)
        let entry = SocketTable.find(client: plain.peer, server: plain.local, in: table)
        #expect(found != nil && found?.inode == entry?.inode)
        #expect(interruptions < 0)
    }

    @Test func aConnectionWhoseClientIsNotInTheTableGivesNothing() throws {
        let connection = try LoopbackConnection()
        var addresses = connection.addresses
        addresses.peer.port = addresses.peer.port == 1 ? 2 : 1
        #expect(ClientProcessFinder(unit: { _ in nil }, skipsOwnProcess: false).find(addresses) == nil)
    }

    @Test func theOwnProcessIsSkippedGivingTheSocketsOwnerOnly() throws {
        let connection = try LoopbackConnection()
        let process = ClientProcessFinder(unit: { _ in nil }).find(connection.addresses)
        #expect(process?.pid == nil)
        #expect(process?.uid == Int(geteuid()))
        #expect(process?.user != nil)
    }

    @Test func effectiveUIDIsTheSecondNumber() {
        let status = Array("Name:\tcurl\nUid:\t1000\t1001\t1002\t1003\nGid:\t5\t5\t5\t5\n".utf8)
        #expect(ProcessFacts.effectiveUID(status: status) == 1001)
        #expect(ProcessFacts.effectiveUID(status: Array("Name:\tx\n".utf8)) == nil)
    }
}

/// A listening socket on 127.0.0.1, a client connected to it, and the accepted end.
final class LoopbackConnection {
    let listener: CInt
    let client: CInt
    let accepted: CInt
    let addresses: ConnectionAddresses

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        try Self.check(Self.call(address) { bind(listener, $0, $1) })
        try Self.check(listen(listener, 4))
        let server = Self.name(listener, getsockname)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try Self.check(Self.call(server) { connect(client, $0, $1) })
        let accepted = accept(listener, nil, nil)
        try Self.check(accepted)
        // Close-on-exec, all three: a process another test starts meanwhile inherited them, and
        // the finder found that process holding the client's end instead of this one.
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        self.listener = listener
        self.client = client
        self.accepted = accepted
        let local = Self.name(accepted, getsockname)
        let peer = Self.name(accepted, getpeername)
        self.addresses = ConnectionAddresses(local: Self.endpoint(local), peer: Self.endpoint(peer))
    }

    deinit {
        close(self.client)
        close(self.accepted)
        close(self.listener)
    }

    static func check(_ rc: CInt) throws {
        struct Failed: Error { var errno: CInt }
        if rc < 0 { throw Failed(errno: errno) }
    }

    static func call(_ address: sockaddr_in, _ body: (UnsafePointer<sockaddr>, socklen_t) -> CInt) -> CInt {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    static func name(
        _ fd: CInt, _ get: (CInt, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> CInt
    ) -> sockaddr_in {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { get(fd, $0, &length) }
        }
        return address
    }

    static func endpoint(_ address: sockaddr_in) -> ConnectionAddresses.Endpoint {
        var raw = address.sin_addr
        return .init(address: withUnsafeBytes(of: &raw) { Array($0) }, port: UInt16(bigEndian: address.sin_port))
    }
}

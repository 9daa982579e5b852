import AFProxyModel
import CNetlink

#if canImport(Glibc)
import Glibc
#endif

/// A `NETLINK_SOCK_DIAG` socket for exact queries, blocking with a short receive timeout: it is
/// used from the client-process lookup's own queue, one question at a time.
final class SockDiagSocket {
    private let descriptor: CInt
    private var sequence: UInt32 = 0
    private var buffer = [UInt8](repeating: 0, count: 8192)
    /// `recv(2)`; a test puts a signal in front of it.
    private let receive: Receive

    /// Reads one datagram of `descriptor` into the buffer: a byte count, or -1 and `errno`.
    typealias Receive = (_ descriptor: CInt, _ buffer: UnsafeMutableRawBufferPointer) -> Int

    /// Nil where netlink cannot be had (a service whose `RestrictAddressFamilies=` leaves it out).
    init?(receive: @escaping Receive = { recv($0, $1.baseAddress, $1.count, 0) }) {
        let fd = Glibc.socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_SOCK_DIAG)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.descriptor = fd
        self.receive = receive
    }

    deinit {
        close(self.descriptor)
    }

    /// The uid and inode of the socket whose own end is `client` and whose other end is `server`
    /// (unmapped); nil when the kernel does not say.
    func socket(
        client: ConnectionAddresses.Endpoint, server: ConnectionAddresses.Endpoint
    ) -> (
        uid: Int, inode: UInt64
    )? {
        self.sequence &+= 1
        let sequence = self.sequence
        let request = SockDiagQuery.request(client: client, server: server, sequence: sequence)
        let sent = Self.retryingInterrupts {
            request.withUnsafeBytes { send(self.descriptor, $0.baseAddress, $0.count, 0) }
        }
        guard sent == request.count else { return nil }
        // An answer to an earlier question that timed out may come first: skip it.
        for _ in 0..<4 {
            let count = Self.retryingInterrupts {
                self.buffer.withUnsafeMutableBytes { self.receive(self.descriptor, $0) }
            }
            guard count > 0 else { return nil }
            switch SockDiagQuery.answer(self.buffer[0..<count], sequence: sequence) {
            case .found(let uid, let inode): return (uid, inode)
            case .failed: return nil
            case .other: continue
            }
        }
        return nil
    }

    /// `call` again while it fails with EINTR. A socket with a receive timeout is never restarted
    /// after a signal handler ran, SA_RESTART or not, and on Linux a stop and continue (SIGSTOP,
    /// a debugger) interrupts it with no handler at all (signal(7)): the question was fine, and
    /// taking the interruption for "the kernel does not know" lost the client's process.
    private static func retryingInterrupts(_ call: () -> Int) -> Int {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}

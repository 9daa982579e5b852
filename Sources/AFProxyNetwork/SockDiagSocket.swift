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

    /// Nil where netlink cannot be had (a service whose `RestrictAddressFamilies=` leaves it out).
    init?() {
        let fd = Glibc.socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_SOCK_DIAG)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.descriptor = fd
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
        let sent = request.withUnsafeBytes { send(self.descriptor, $0.baseAddress, $0.count, 0) }
        guard sent == request.count else { return nil }
        // An answer to an earlier question that timed out may come first: skip it.
        for _ in 0..<4 {
            let count = self.buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            switch SockDiagQuery.answer(self.buffer[0..<count], sequence: sequence) {
            case .found(let uid, let inode): return (uid, inode)
            case .failed: return nil
            case .other: continue
            }
        }
        return nil
    }
}

import CNetlink

#if canImport(Glibc)
import Glibc
#endif

/// A `NETLINK_ROUTE` socket joined to the groups of links, IPv4 and IPv6 addresses and routes,
/// so that the kernel tells it every change (no polling). Non-blocking: the watcher's thread
/// waits in `poll`.
struct NetlinkSocket: ~Copyable {
    let descriptor: CInt

    init() throws(NetlinkError) {
        let fd = socket(
            AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            NETLINK_ROUTE)
        guard fd >= 0 else { throw NetlinkError("socket(AF_NETLINK, NETLINK_ROUTE)") }
        // Room for a burst of notifications (a VPN coming up announces dozens of routes); past it
        // the kernel drops them and says ENOBUFS, and everything is dumped again.
        var size: CInt = 1 << 20
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = UInt32(
            RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw NetlinkError("bind(netlink route groups)", errno: code)
        }
        self.descriptor = fd
    }

    deinit {
        close(self.descriptor)
    }

    func send(_ bytes: [UInt8]) throws(NetlinkError) {
        let sent = bytes.withUnsafeBytes { Glibc.send(self.descriptor, $0.baseAddress, $0.count, 0) }
        guard sent == bytes.count else { throw NetlinkError("send(netlink dump request)") }
    }

    enum Received {
        case messages(ArraySlice<UInt8>)
        /// Nothing more to read now.
        case empty
        /// The kernel dropped messages: the receive buffer overflowed.
        case overrun
    }

    /// One datagram into `buffer`. A datagram not from the kernel (port id 0) is skipped: another
    /// process may send to our port, and only the kernel's word counts.
    func receive(into buffer: inout [UInt8]) throws(NetlinkError) -> Received {
        while true {
            var sender = sockaddr_nl()
            var length = socklen_t(MemoryLayout<sockaddr_nl>.size)
            let count = buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &sender) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(self.descriptor, raw.baseAddress, raw.count, 0, $0, &length)
                    }
                }
            }
            if count < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .empty
                case ENOBUFS: return .overrun
                default: throw NetlinkError("recv(netlink)")
                }
            }
            if sender.nl_pid != 0 { continue }
            return .messages(buffer[0..<count])
        }
    }
}

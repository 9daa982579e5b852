import AFProxyModel
import CNetlink

#if canImport(Glibc)
import Glibc
#endif

/// One TCP socket asked of the kernel by its four addresses (`NETLINK_SOCK_DIAG`, an exact
/// `SOCK_DIAG_BY_FAMILY` request, no dump): its owner's uid and its inode. What `ss -e` shows,
/// for one socket and in one round trip, where reading `/proc/net/tcp` costs a line per socket
/// of the namespace (TIME_WAIT ones too).
enum SockDiagQuery {
    /// `struct inet_diag_req_v2`: family, protocol, ext, pad, states, then the socket id.
    static let requestSize = 56
    /// `struct inet_diag_msg` before its attributes.
    static let replySize = 72

    /// The request for the socket whose own end is `client` and whose other end is `server`; the
    /// addresses already unmapped, both of one family.
    static func request(
        client: ConnectionAddresses.Endpoint, server: ConnectionAddresses.Endpoint, sequence: UInt32
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(NetlinkMessage.headerSize + Self.requestSize)
        Self.append(UInt32(NetlinkMessage.headerSize + Self.requestSize), to: &bytes)
        Self.append(UInt16(SOCK_DIAG_BY_FAMILY), to: &bytes)
        Self.append(UInt16(NLM_F_REQUEST), to: &bytes)
        Self.append(sequence, to: &bytes)
        Self.append(UInt32(0), to: &bytes)
        bytes.append(UInt8(client.address.count == 4 ? AF_INET : AF_INET6))
        bytes.append(UInt8(Glibc.IPPROTO_TCP))
        bytes += [0, 0]  // no extensions, pad
        Self.append(UInt32.max, to: &bytes)  // any state
        // inet_diag_sockid: ports and addresses in network order, no interface, no cookie.
        bytes += [
            UInt8(client.port >> 8), UInt8(client.port & 0xFF), UInt8(server.port >> 8), UInt8(server.port & 0xFF),
        ]
        bytes += Self.padded(client.address) + Self.padded(server.address)
        Self.append(UInt32(0), to: &bytes)
        Self.append(UInt32(INET_DIAG_NOCOOKIE), to: &bytes)
        Self.append(UInt32(INET_DIAG_NOCOOKIE), to: &bytes)
        return bytes
    }

    enum Answer: Equatable {
        case found(uid: Int, inode: UInt64)
        /// The kernel's error (ENOENT: no such socket, or no TCP diagnostics in this kernel).
        case failed(errno: Int32)
        /// Not an answer to `sequence`.
        case other
    }

    /// The kernel's answer in one received datagram.
    static func answer(_ bytes: ArraySlice<UInt8>, sequence: UInt32) -> Answer {
        for message in NetlinkMessage.parse(bytes) where message.sequence == sequence {
            if message.isError {
                let code = message.payload.integer(at: 0, as: Int32.self) ?? -1
                return .failed(errno: -code)
            }
            guard message.type == UInt16(SOCK_DIAG_BY_FAMILY),
                let uid = message.payload.integer(at: 64, as: UInt32.self),
                let inode = message.payload.integer(at: 68, as: UInt32.self)
            else { continue }
            return .found(uid: Int(uid), inode: UInt64(inode))
        }
        return .other
    }

    private static func padded(_ address: [UInt8]) -> [UInt8] {
        address + [UInt8](repeating: 0, count: 16 - address.count)
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }
}

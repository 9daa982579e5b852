import CNetlink

/// One netlink message (`struct nlmsghdr` and what follows it), read from the bytes of one
/// receive. A datagram holds several; a length that runs past the end stops the parse there
/// rather than trusting it.
struct NetlinkMessage: Sendable, Equatable {
    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    /// What follows the 16-byte header: an `ifinfomsg`, an `rtmsg`, an error code.
    var payload: ArraySlice<UInt8>

    static let headerSize = 16

    init(type: UInt16, flags: UInt16 = 0, sequence: UInt32 = 0, payload: ArraySlice<UInt8>) {
        self.type = type
        self.flags = flags
        self.sequence = sequence
        self.payload = payload
    }

    /// Every whole message in `bytes`, in order.
    static func parse(_ bytes: ArraySlice<UInt8>) -> [NetlinkMessage] {
        var messages: [NetlinkMessage] = []
        var offset = 0
        while let length = bytes.integer(at: offset, as: UInt32.self).map(Int.init),
            length >= Self.headerSize, offset + length <= bytes.count,
            let type = bytes.integer(at: offset + 4, as: UInt16.self),
            let flags = bytes.integer(at: offset + 6, as: UInt16.self),
            let sequence = bytes.integer(at: offset + 8, as: UInt32.self)
        {
            let start = bytes.startIndex + offset
            messages.append(
                NetlinkMessage(
                    type: type, flags: flags, sequence: sequence,
                    payload: bytes[(start + Self.headerSize)..<(start + length)]))
            offset += netlinkAligned(length)
        }
        return messages
    }

    /// The end of a dump (`NLMSG_DONE`).
    var isDone: Bool { self.type == UInt16(NLMSG_DONE) }
    /// `NLMSG_ERROR`: the answer to a request that failed (or an acknowledgement, code 0).
    var isError: Bool { self.type == UInt16(NLMSG_ERROR) }
}

import CNetlink

/// The attributes after a fixed header (`struct rtattr`: length, type, value, aligned to 4):
/// the last of each type wins, as the kernel sends each once. The nested and byte-order flags of
/// the type are masked off.
struct NetlinkAttributes: Sendable, Equatable {
    private(set) var values: [UInt16: ArraySlice<UInt8>] = [:]

    init(_ bytes: ArraySlice<UInt8>) {
        var offset = 0
        let mask = ~UInt16(NLA_F_NESTED | NLA_F_NET_BYTEORDER)
        while let length = bytes.integer(at: offset, as: UInt16.self).map(Int.init), length >= 4,
            offset + length <= bytes.count, let type = bytes.integer(at: offset + 2, as: UInt16.self)
        {
            let start = bytes.startIndex + offset
            self.values[type & mask] = bytes[(start + 4)..<(start + length)]
            offset += netlinkAligned(length)
        }
    }

    subscript(type: Int32) -> ArraySlice<UInt8>? {
        self.values[UInt16(truncatingIfNeeded: type)]
    }

    func integer<T: FixedWidthInteger>(_ type: Int32, as: T.Type = T.self) -> T? {
        self[type]?.integer(at: 0, as: T.self)
    }

    /// A NUL-terminated string attribute (`IFLA_IFNAME`).
    func string(_ type: Int32) -> String? {
        self[type].map { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

/// Native-endian reads from a netlink buffer. Netlink speaks the host's byte order and packs its
/// headers at 4-byte boundaries, but a slice of a receive buffer promises no alignment: every read
/// is unaligned and bounds-checked (nil past the end) so a short or hostile message cannot trap.
extension ArraySlice<UInt8> {
    func integer<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) -> T? {
        let start = self.startIndex + offset
        guard offset >= 0, start + MemoryLayout<T>.size <= self.endIndex else { return nil }
        return self.withUnsafeBytes { raw in
            raw.loadUnaligned(fromByteOffset: offset, as: T.self)
        }
    }

    /// The bytes from `offset` on (empty past the end).
    func tail(from offset: Int) -> ArraySlice<UInt8> {
        let start = Swift.min(self.startIndex + Swift.max(0, offset), self.endIndex)
        return self[start...]
    }
}

/// Netlink aligns every header and attribute to 4 bytes (NLMSG_ALIGN, RTA_ALIGN).
func netlinkAligned(_ length: Int) -> Int {
    (length + 3) & ~3
}

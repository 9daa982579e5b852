#if canImport(Glibc)
import Glibc
#endif

/// Sends and receives open descriptors with a message over a Unix socket (`SCM_RIGHTS`,
/// unix(7)): how `afproxyctl run` hands the daemon the sockets it opened inside a capture's
/// network namespace, which the daemon could not open there itself. Written by hand: NIO reads
/// no ancillary data on stream or sequenced-packet sockets, and Glibc's `CMSG_*` helpers are
/// macros Swift does not import; the layout they compute is `cmsghdr` followed by the data,
/// each padded to `size_t`.
package enum DescriptorPassing {
    /// The most descriptors one message carries here.
    package static let maxDescriptors = 8

    private static let alignment = MemoryLayout<Int>.size

    private static func aligned(_ length: Int) -> Int {
        (length + Self.alignment - 1) & ~(Self.alignment - 1)
    }

    private static var headerLength: Int { Self.aligned(MemoryLayout<cmsghdr>.size) }

    /// `sendmsg(2)` of `bytes` (at least one) with `descriptors`: 0, or the errno.
    package static func send(_ socket: Int32, bytes: [UInt8], descriptors: [Int32]) -> Int32 {
        precondition(!bytes.isEmpty && descriptors.count <= Self.maxDescriptors)
        let dataLength = descriptors.count * MemoryLayout<Int32>.size
        var control = [UInt8](repeating: 0, count: Self.headerLength + Self.aligned(dataLength))
        control.withUnsafeMutableBytes { raw in
            var header = cmsghdr()
            header.cmsg_len = Int(Self.headerLength + dataLength)
            header.cmsg_level = SOL_SOCKET
            header.cmsg_type = Int32(SCM_RIGHTS)
            raw.storeBytes(of: header, as: cmsghdr.self)
            for (index, descriptor) in descriptors.enumerated() {
                raw.storeBytes(
                    of: descriptor, toByteOffset: Self.headerLength + index * MemoryLayout<Int32>.size, as: Int32.self)
            }
        }
        var payload = bytes
        let sent = Self.withMessage(&payload, &control, controlLength: descriptors.isEmpty ? 0 : control.count) {
            sendmsg(socket, &$0, Int32(MSG_NOSIGNAL))
        }
        return sent < 0 ? errno : 0
    }

    /// `recvmsg(2)` of one message of at most `maxBytes`, with the descriptors it carries (each
    /// close-on-exec). Empty bytes: the peer closed. A message cut short, or with more
    /// descriptors than `maxDescriptors`, is an error (`EMSGSIZE`), its descriptors closed.
    package static func receive(_ socket: Int32, maxBytes: Int) -> Result<(bytes: [UInt8], descriptors: [Int32]), Errno>
    {
        var payload = [UInt8](repeating: 0, count: maxBytes)
        var control = [UInt8](
            repeating: 0, count: Self.headerLength + Self.aligned(Self.maxDescriptors * MemoryLayout<Int32>.size))
        var flags: Int32 = 0
        var controlLength = 0
        let received = Self.withMessage(&payload, &control, controlLength: control.count) { message in
            let count = recvmsg(socket, &message, Int32(MSG_CMSG_CLOEXEC))
            flags = message.msg_flags
            controlLength = message.msg_controllen
            return count
        }
        guard received >= 0 else { return .failure(Errno(errno)) }
        var descriptors: [Int32] = []
        control.withUnsafeBytes { raw in
            var offset = 0
            while offset + Self.headerLength <= controlLength {
                let header = raw.loadUnaligned(fromByteOffset: offset, as: cmsghdr.self)
                guard header.cmsg_len >= Self.headerLength, offset + header.cmsg_len <= controlLength else { break }
                if header.cmsg_level == SOL_SOCKET, header.cmsg_type == Int32(SCM_RIGHTS) {
                    let count = (header.cmsg_len - Self.headerLength) / MemoryLayout<Int32>.size
                    for index in 0..<count {
                        descriptors.append(
                            raw.loadUnaligned(
                                fromByteOffset: offset + Self.headerLength + index * MemoryLayout<Int32>.size,
                                as: Int32.self))
                    }
                }
                offset += Self.aligned(header.cmsg_len)
            }
        }
        if flags & Int32(MSG_TRUNC | MSG_CTRUNC) != 0 {
            for descriptor in descriptors { close(descriptor) }
            return .failure(Errno(EMSGSIZE))
        }
        return .success((Array(payload.prefix(received)), descriptors))
    }

    /// A `msghdr` over `payload` (one vector) and the first `controlLength` bytes of `control`.
    private static func withMessage(
        _ payload: inout [UInt8], _ control: inout [UInt8], controlLength: Int, _ body: (inout msghdr) -> Int
    ) -> Int {
        payload.withUnsafeMutableBytes { payloadRaw in
            control.withUnsafeMutableBytes { controlRaw in
                var vector = iovec(iov_base: payloadRaw.baseAddress, iov_len: payloadRaw.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    if controlLength > 0 {
                        message.msg_control = controlRaw.baseAddress
                        message.msg_controllen = controlLength
                    }
                    return body(&message)
                }
            }
        }
    }

    /// An errno as an error value.
    package struct Errno: Error, Equatable, CustomStringConvertible {
        package var code: Int32
        package init(_ code: Int32) { self.code = code }
        package var description: String { String(cString: strerror(self.code)) }
    }
}

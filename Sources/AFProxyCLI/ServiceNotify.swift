#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) for `capture-hold`, the one afproxyctl command systemd starts as Type=notify:
/// one datagram to `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Written here
/// rather than through the daemon's SystemdNotifier: afproxyctl links only the wire API, and the
/// protocol is a stable datagram of `KEY=value` lines. Without `NOTIFY_SOCKET` it does nothing.
enum ServiceNotify {
    static func ready(status: String) {
        Self.send("READY=1\nSTATUS=\(status)")
    }

    static func status(_ text: String) {
        Self.send("STATUS=\(text)")
    }

    private static func send(_ message: String) {
        guard let value = getenv("NOTIFY_SOCKET"), value.pointee != 0 else { return }
        var path = Array(String(cString: value).utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        var address = sockaddr_un()
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        _ = message.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, text, strlen(text), Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
    }
}

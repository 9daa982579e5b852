#if canImport(Glibc)
import Glibc
#endif

/// The inside of a capture's network namespace, set up by `afproxyctl capture-init` as root of
/// the user namespace `unshare` made for it: loopback up and the only route (so that a
/// connection to any address leaves through the output hook, where it is redirected), the
/// sockets afproxy will own in there, and the nftables rules that send every TCP connection to
/// one and every DNS query to another. UDP other than DNS is rejected, so QUIC falls back to
/// TCP. Nothing is changed outside the namespace.
struct CaptureNamespace {
    /// TCP on 127.0.0.1 and ::1 (one port), UDP on 127.0.0.1 and ::1 (another), in the order
    /// `CaptureRegistration.descriptorCount` names.
    var descriptors: [Int32]
    var tcpPort: Int
    var udpPort: Int

    /// The nftables table, as `nft -f` reads it: redirects at the NAT output hook, the UDP refusal
    /// before it (priority -150), where a query's port is still 53.
    static func ruleset(tcpPort: Int, udpPort: Int) -> String {
        """
        table inet afproxy_capture {
        \tchain to_afproxy {
        \t\ttype nat hook output priority -100; policy accept;
        \t\tmeta l4proto tcp redirect to :\(tcpPort)
        \t\tudp dport 53 redirect to :\(udpPort)
        \t}
        \tchain no_udp {
        \t\ttype filter hook output priority -150; policy accept;
        \t\tmeta l4proto udp udp dport != 53 ct state new reject
        \t}
        }

        """
    }

    /// Sets the namespace up; throws a message naming the step that failed.
    static func setUp(ip: String, nft: String) throws(CaptureSetupFailure) -> CaptureNamespace {
        try Self.run(ip, ["ip", "link", "set", "lo", "up"])
        try Self.run(ip, ["ip", "route", "add", "default", "dev", "lo", "src", "127.0.0.1"])
        // IPv6 may be off in this kernel: the v4 path is enough then.
        let v6 = (try? Self.run(ip, ["ip", "-6", "route", "add", "default", "dev", "lo", "src", "::1"])) != nil
        var descriptors: [Int32] = []
        let tcp4 = try Self.socket(AF_INET, SOCK_STREAM, port: 0)
        descriptors.append(tcp4.fd)
        let tcp6 = v6 ? try Self.socket(AF_INET6, SOCK_STREAM, port: tcp4.port) : tcp4
        descriptors.append(tcp6.fd == tcp4.fd ? dup(tcp4.fd) : tcp6.fd)
        let udp4 = try Self.socket(AF_INET, SOCK_DGRAM, port: 0)
        descriptors.append(udp4.fd)
        let udp6 = v6 ? try Self.socket(AF_INET6, SOCK_DGRAM, port: udp4.port) : udp4
        descriptors.append(udp6.fd == udp4.fd ? dup(udp4.fd) : udp6.fd)
        try Self.run(nft, ["nft", "-f", "/dev/stdin"], input: Self.ruleset(tcpPort: tcp4.port, udpPort: udp4.port))
        return CaptureNamespace(descriptors: descriptors, tcpPort: tcp4.port, udpPort: udp4.port)
    }

    /// A socket bound to loopback (`port` 0: any), listening when it is TCP.
    private static func socket(
        _ family: Int32, _ type: __socket_type, port: Int
    ) throws(CaptureSetupFailure) -> (
        fd: Int32, port: Int
    ) {
        let fd = Glibc.socket(family, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CaptureSetupFailure("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        if family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var storage = sockaddr_storage()
        var length: socklen_t
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            withUnsafeBytes(of: address) { raw in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = in6addr_loopback
            withUnsafeBytes(of: address) { raw in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw CaptureSetupFailure("bind on loopback: \(reason)")
        }
        if type == SOCK_STREAM, listen(fd, 1024) != 0 {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw CaptureSetupFailure("listen: \(reason)")
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        let bytes = withUnsafeBytes(of: actual) { Array($0.prefix(4)) }
        return (fd, Int(UInt16(bytes[2]) << 8 | UInt16(bytes[3])))
    }

    /// Runs a tool to its end; its standard error goes to afproxyctl's. `input` is written to its
    /// standard input.
    private static func run(_ path: String, _ arguments: [String], input: String? = nil) throws(CaptureSetupFailure) {
        var pipeEnds: [Int32] = [-1, -1]
        if input != nil {
            pipe(&pipeEnds)
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        }
        let started = ChildProcess.spawn(path, arguments, stdin: input == nil ? nil : pipeEnds[0])
        if let input {
            close(pipeEnds[0])
            _ = input.withCString { write(pipeEnds[1], $0, strlen($0)) }
            close(pipeEnds[1])
        }
        switch started {
        case .failure(let failure): throw CaptureSetupFailure(failure.description)
        case .success(let child):
            let status = child.wait()
            guard status == 0 else {
                throw CaptureSetupFailure("\(arguments.joined(separator: " ")) failed (exit status \(status))")
            }
        }
    }
}

/// Why a capture could not be set up, in words for the person who ran it.
struct CaptureSetupFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Where the tools a capture needs are: the `PATH`, then the system directories a user's `PATH`
/// often leaves out (`nft` and `ip` live in /usr/sbin).
enum ToolPath {
    static func find(_ name: String) -> String? {
        let path = (getenv("PATH").map { String(cString: $0) } ?? "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

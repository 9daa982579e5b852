#if canImport(Glibc)
import Glibc
#endif

/// Which process holds a socket: the one whose `/proc/PID/fd` has a link to `socket:[INODE]`.
/// Reading another process's descriptors needs the right to trace it (the same user, or
/// CAP_SYS_PTRACE): the processes it may not read are passed over.
enum SocketHolderScan {
    /// The first of `pids` that holds socket `inode`, the ones in `first` tried before the rest.
    static func holder(of inode: UInt64, first: [Int32], pids: () -> [Int32], skipping own: Int32) -> Int32? {
        let target = Array("socket:[\(inode)]".utf8)
        for pid in first where pid != own && Self.holds(pid, target) { return pid }
        let tried = Set(first)
        for pid in pids() where pid != own && !tried.contains(pid) && Self.holds(pid, target) { return pid }
        return nil
    }

    private static func holds(_ pid: Int32, _ target: [UInt8]) -> Bool {
        let dirfd = open("/proc/\(pid)/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dirfd >= 0 else { return false }
        guard let dir = fdopendir(dirfd) else {
            close(dirfd)
            return false
        }
        defer { closedir(dir) }
        return target.withUnsafeBytes { target in
            // One buffer, one byte longer than the target, so that a longer link never matches.
            let capacity = target.count + 1
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
            defer { buffer.deallocate() }
            while let entry = readdir(dir) {
                let count = readlinkat(dirfd, &entry.pointee.d_name.0, buffer, capacity)
                if count == target.count, memcmp(buffer, target.baseAddress!, count) == 0 { return true }
            }
            return false
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// A network namespace kept at a path (a bind mount of the namespace, as `ip netns add` and
/// `unshare --net=PATH` make): what systemd's `NetworkNamespacePath=` and `nsenter --net=` join.
enum NamespaceFile {
    /// A mount point: the file's device is not its directory's (statfs(2)'s NSFS_MAGIC would say
    /// more, but Glibc's module leaves sys/vfs.h out).
    static func isMounted(_ path: String) -> Bool {
        var file = stat()
        var directory = stat()
        let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        return stat(path, &file) == 0 && stat(parent.isEmpty ? "/" : parent, &directory) == 0
            && file.st_dev != directory.st_dev
    }

    /// An empty file at `path` for the namespace to be mounted on, in a directory made when
    /// missing; what a killed holder left there before is taken away first.
    static func prepare(_ path: String) throws(CaptureSetupFailure) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty, mkdir(directory, 0o755) != 0, errno != EEXIST {
            throw CaptureSetupFailure("cannot make \(directory): \(String(cString: strerror(errno)))")
        }
        Self.remove(path)
        let fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CaptureSetupFailure("cannot make \(path): \(String(cString: strerror(errno)))") }
        close(fd)
    }

    /// Unmounts (lazily: a service still in the namespace keeps it) and removes the file. Only
    /// system calls, so that a signal handler may call it.
    static func remove(_ path: UnsafePointer<CChar>) {
        _ = umount2(path, Int32(MNT_DETACH))
        _ = unlink(path)
    }
}

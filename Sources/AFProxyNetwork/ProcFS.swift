#if canImport(Glibc)
import Glibc
#endif

/// Small reads of `/proc`: whole files (which report a size of 0, so they are read until the
/// end) and symbolic links. Not Foundation's `Data(contentsOf:)`: it stops at the first short
/// read, and `/proc/net/tcp` hands out one page per read (4,050 of its 4,800 bytes came back).
enum ProcFS {
    /// The file's bytes, at most `limit`; nil when it cannot be opened (gone, not ours to read).
    static func read(_ path: String, limit: Int = 1 << 22) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }

    /// Where a symbolic link points; nil when it cannot be read.
    static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The process ids `/proc` lists (the ones this process may see).
    static func pids(root: String = "/proc") -> [Int32] {
        guard let dir = opendir(root) else { return [] }
        defer { closedir(dir) }
        var pids: [Int32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if let pid = Int32(name), pid > 0 { pids.append(pid) }
        }
        return pids
    }
}

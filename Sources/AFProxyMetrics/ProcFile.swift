#if canImport(Glibc)
import Glibc
#endif

/// Small reads of /proc: its files report a size of 0, so they are read until end of file
/// (Foundation's reader stops at the first short read, which /proc's page-sized reads give).
enum ProcFile {
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Entries of a directory but `.` and `..`; the directory's own descriptor, open while
    /// counting, is left out too (for /proc/self/fd).
    static func count(entriesOf path: String) -> Int {
        guard let directory = opendir(path) else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { count += 1 }
        }
        return max(0, count - 1)
    }
}

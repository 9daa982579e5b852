import AFProxyModel

#if canImport(Glibc)
import Glibc
#endif

/// What `/proc/PID` says of a process: its executable (which needs the right to trace it), its
/// command line, its effective uid, and the name of that user.
enum ProcessFacts {
    static func read(pid: Int32, unit: (Int32) -> String?) -> ClientProcess? {
        guard let status = ProcFS.read("/proc/\(pid)/status", limit: 8192) else { return nil }
        let uid = Self.effectiveUID(status: status)
        return ClientProcess(
            pid: Int(pid), executable: ProcFS.link("/proc/\(pid)/exe"),
            commandLine: ProcFS.read("/proc/\(pid)/cmdline", limit: 4096).flatMap {
                ClientProcess.commandLine(fromProc: $0)
            },
            user: uid.flatMap(Self.userName), uid: uid, unit: unit(pid))
    }

    /// The second number of the `Uid:` line (real, effective, saved, filesystem).
    static func effectiveUID(status: [UInt8]) -> Int? {
        let text = String(decoding: status, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }) else { return nil }
        let numbers = line.dropFirst(4).split(whereSeparator: { $0 == "\t" || $0 == " " })
        return numbers.count >= 2 ? Int(numbers[1]) : nil
    }

    /// The name the user database gives `uid`; nil when it has none.
    static func userName(_ uid: Int) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let rc = getpwuid_r(uid_t(uid), &entry, &buffer, buffer.count, &result)
        guard rc == 0, result != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }
}

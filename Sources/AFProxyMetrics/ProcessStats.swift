#if canImport(Glibc)
import Glibc
#endif

/// The process's own figures for the standard `process_*` metrics, read from /proc/self at
/// scrape time (swift-prometheus has no process collector). Parsing is kept apart from reading
/// so that it is tested on fixed text.
package struct ProcessStats: Sendable, Equatable {
    package var cpuSeconds: Double = 0
    package var residentBytes: Double = 0
    package var virtualBytes: Double = 0
    package var startTimeSeconds: Double = 0
    package var openFDs: Double = 0
    package var maxFDs: Double = 0

    package init() {}

    /// Fields of /proc/self/stat after the command name, which may itself hold spaces and ")":
    /// the last ")" ends it. `ticks`: clock ticks a second; `pageSize` in bytes; `bootTime`: the
    /// `btime` line of /proc/stat, in seconds since the epoch.
    package static func parse(stat: String, ticks: Double, pageSize: Double, bootTime: Double) -> ProcessStats? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        // After ")": field 3 (state) onwards; proc(5) numbers them from 1.
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        func field(_ number: Int) -> Double? {
            let index = number - 3
            return index < fields.count ? Double(fields[index]) : nil
        }
        guard ticks > 0, let utime = field(14), let stime = field(15), let start = field(22),
            let vsize = field(23), let rss = field(24)
        else { return nil }
        var stats = ProcessStats()
        stats.cpuSeconds = (utime + stime) / ticks
        stats.startTimeSeconds = bootTime + start / ticks
        stats.virtualBytes = vsize
        stats.residentBytes = rss * pageSize
        return stats
    }

    /// The `btime` line of /proc/stat: when the system booted, in seconds since the epoch.
    package static func bootTime(procStat: String) -> Double? {
        for line in procStat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }

    /// The figures now; nil where /proc cannot be read (not Linux, or no /proc mounted).
    package static func current() -> ProcessStats? {
        guard let stat = ProcFile.read("/proc/self/stat"),
            let bootTime = ProcFile.read("/proc/stat").flatMap(Self.bootTime(procStat:)),
            var stats = Self.parse(
                stat: stat, ticks: Double(sysconf(Int32(_SC_CLK_TCK))), pageSize: Double(sysconf(Int32(_SC_PAGESIZE))),
                bootTime: bootTime)
        else { return nil }
        stats.openFDs = Double(ProcFile.count(entriesOf: "/proc/self/fd"))
        var limit = rlimit()
        if getrlimit(fileLimitResource, &limit) == 0 { stats.maxFDs = Double(limit.rlim_cur) }
        return stats
    }
}

#if os(Linux)
/// glibc declares the resource as an enum its functions take as `__rlimit_resource_t`.
private let fileLimitResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#endif

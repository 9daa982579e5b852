import AFProxyMetrics
import Testing

@Suite struct ProcessStatsTests {
    /// proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24; a command name with spaces
    /// and a ")" must not shift the fields.
    @Test func parsesTheStatLine() throws {
        let line =
            "4242 (afproxy (x) y) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 150 0 0 20 0 9 0 "
            + "3541795 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
        let stats = try #require(ProcessStats.parse(stat: line, ticks: 100, pageSize: 4096, bootTime: 1_700_000_000))
        #expect(stats.cpuSeconds == 4)
        #expect(stats.startTimeSeconds == 1_700_000_000 + 35417.95)
        #expect(stats.virtualBytes == 104_857_600)
        #expect(stats.residentBytes == 2560 * 4096)
    }

    @Test func refusesATruncatedLine() {
        #expect(ProcessStats.parse(stat: "4242 (afproxy) S 1 2 3", ticks: 100, pageSize: 4096, bootTime: 0) == nil)
        #expect(ProcessStats.parse(stat: "garbage", ticks: 100, pageSize: 4096, bootTime: 0) == nil)
    }

    @Test func readsBootTime() {
        #expect(ProcessStats.bootTime(procStat: "cpu  1 2 3\nintr 5\nbtime 1763900000\nprocesses 9\n") == 1_763_900_000)
        #expect(ProcessStats.bootTime(procStat: "cpu 1\n") == nil)
    }

    @Test func readsThisProcess() throws {
        let stats = try #require(ProcessStats.current())
        #expect(stats.residentBytes > 0)
        #expect(stats.openFDs >= 3)
        #expect(stats.maxFDs >= stats.openFDs)
        #expect(stats.startTimeSeconds > 1_600_000_000)
    }
}

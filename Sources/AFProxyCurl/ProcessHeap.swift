import CCurl

/// The process's malloc policy. It sits with the upstream session because the session's buffers
/// (curl's receive buffers, the response bytes it hands to the event loops) are most of what
/// the heap holds, and because this module owns the shim that reaches `malloc.h`.
public enum ProcessHeap {
    /// At most two glibc arenas. By default every thread that allocates gets one (up to eight
    /// per core), and bytes allocated on the session thread but freed on an event loop stay
    /// cached in the arena they came from, so each busy thread keeps its own high-water mark.
    /// Measured over the benchmark's sequence (1000 idle connections, 64 and 256 busy ones, 1 GiB
    /// down, 256 MiB up, 1 GiB through CONNECT): peak RSS 50 → 40 MiB, with no CPU cost that
    /// stood out of the run-to-run noise. Call it before the threads start.
    public static func limitArenas(to count: Int32 = 2) {
        _ = mallopt(M_ARENA_MAX, count)
    }

    /// Hands freed heap pages back to the system.
    static func trim() {
        _ = malloc_trim(0)
    }
}

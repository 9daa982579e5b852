import CCurl

/// The process's malloc policy. It sits with the upstream session because the session's buffers
/// (curl's receive buffers, the response bytes it hands to the event loops) and the tunnels'
/// read buffers are most of what the heap holds, and because this module owns the shim that
/// reaches `malloc.h`.
public enum ProcessHeap {
    /// Call once, before the threads start.
    ///
    /// - At most two arenas. By default every thread that allocates gets one (up to eight per
    ///   core), and bytes allocated on the session thread but freed on an event loop stay cached
    ///   in the arena they came from, so each busy thread keeps its own high-water mark. Over the
    ///   benchmark's sequence (1000 idle connections, 64 and 256 busy ones, 1 GiB down, 256 MiB
    ///   up, 1 GiB through CONNECT) peak RSS went from 50 to 40 MiB.
    /// - Fixed thresholds instead of glibc's sliding ones: buffers up to 2 MiB come from the
    ///   heap, and its top is given back only past 8 MiB free. With the sliding ones, each freed
    ///   256 KiB tunnel read buffer trimmed the heap and the next one faulted its pages in again:
    ///   a TLS tunnel cost 380-480 ms of CPU per GiB, 320-380 with these, peak RSS 41 MiB. The
    ///   idle trim (`trim()`) still returns everything once transfers stop.
    public static func configure() {
        _ = mallopt(M_ARENA_MAX, 2)
        _ = mallopt(M_MMAP_THRESHOLD, 2 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 8 << 20)
    }

    /// Hands freed heap pages back to the system.
    static func trim() {
        _ = malloc_trim(0)
    }
}

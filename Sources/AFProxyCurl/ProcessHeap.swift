import CCurl
import Synchronization

/// The process's malloc policy. It sits with the upstream session because the session's buffers
/// (curl's receive buffers, the response bytes it hands to the event loops) and the tunnels'
/// read buffers are most of what the heap holds, and because this module owns the shim that
/// reaches `malloc.h`.
package enum ProcessHeap {
    /// Call once, before the threads start.
    ///
    /// - glibc's arenas as they come: every thread that allocates gets one (up to eight per core).
    ///   Capped at two, an event loop shared its arena with a session thread, whose short-lived
    ///   head-parsing objects dirtied the pages between one connection's buffers and the next;
    ///   the TLS buffers of idle intercepted connections placed there later (NIOSSL keeps 32 KiB
    ///   to read and 16 KiB to write per connection, mostly never touched) then held those pages:
    ///   about 9 KiB more per idle connection.
    /// - Fixed thresholds instead of glibc's sliding ones: buffers up to 2 MiB come from the
    ///   heap, and its top is given back only past 8 MiB free. With the sliding ones, each freed
    ///   256 KiB tunnel read buffer trimmed the heap and the next one faulted its pages in again,
    ///   which a busy TLS tunnel paid for in CPU on every read. The idle trim (`trim()`) still
    ///   returns what every arena holds free once transfers stop.
    package static func configure() {
        _ = mallopt(M_MMAP_THRESHOLD, 2 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 8 << 20)
    }

    /// One trim at a time in the process: every session thread trims when it is idle, and under
    /// AddressSanitizer (whose mallopt does nothing, so glibc's malloc is not set up before)
    /// two first trims at once both set glibc's heap up, each taking its main arena as the
    /// thread's own, and the second thread's exit then aborted in glibc's arena accounting.
    private static let trimming = Mutex(())

    /// Hands freed heap pages back to the system.
    static func trim() {
        trimming.withLock { _ in _ = malloc_trim(0) }
    }
}

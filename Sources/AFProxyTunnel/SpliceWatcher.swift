import AFProxyModel
import CSplice
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Tells spliced tunnels when their sockets are ready, from one thread of its own waiting in an
/// epoll set of its own.
///
/// Why a thread: NIO offers no way to watch a socket's readiness without reading it, and a NIO
/// read would take the bytes the splice is to move. The same socket sits in NIO's epoll set as
/// well (with no read interest while spliced); registering it here with `EPOLLONESHOT` gives one
/// event per arming, which the thread passes to the tunnel's event loop as a task. Every splice
/// call and every arming runs on that loop (`SpliceRelay`), so this thread never touches a
/// socket and waits only in `epoll_wait`: nothing blocks an event loop.
///
/// An entry's data is a token naming the tunnel and the side; an event whose tunnel is gone
/// (it stopped after the event was queued) is dropped.
final class SpliceWatcher: Sendable {
    typealias Handler = @Sendable (_ side: UInt64, _ events: UInt32) -> Void

    /// The daemon's one watcher, started on first use; nil where epoll cannot be had.
    static let shared: SpliceWatcher? = SpliceWatcher()

    private let poll: Int32
    private let handlers = Locked<[UInt64: Handler]>([:])
    private let nextTunnel = Atomic<UInt64>(1)

    /// A detached pthread of its own that lives as long as the process, as the instance does: not
    /// a thread of a `NIOThreadPool`, whose queue LeakSanitizer reports as leaked at exit.
    private init?() {
        let poll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard poll >= 0 else { return nil }
        self.poll = poll
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<SpliceWatcher>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<SpliceWatcher>.fromOpaque(box).release()
            close(poll)
            return nil
        }
        pthread_detach(thread)
    }

    /// A new tunnel's number, whose sides' tokens are `tunnel << 1 | side`.
    func register(_ handler: @escaping Handler) -> UInt64 {
        let tunnel = self.nextTunnel.add(1, ordering: .relaxed).oldValue
        self.handlers.withLock { $0[tunnel] = handler }
        return tunnel
    }

    /// No more events reach the tunnel's handler.
    func unregister(_ tunnel: UInt64) {
        _ = self.handlers.withLock { $0.removeValue(forKey: tunnel) }
    }

    /// Adds `fd` (`add`) or re-arms it for one event among `events`.
    func arm(_ fd: Int32, tunnel: UInt64, side: UInt64, events: UInt32, add: Bool) -> Bool {
        var event = epoll_event()
        event.events = events | EPOLLONESHOT.rawValue
        event.data.u64 = tunnel << 1 | side
        return epoll_ctl(self.poll, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event) == 0
    }

    /// Takes `fd` out of the set; only while its channel is open, so that the number is still its.
    func remove(_ fd: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(self.poll, EPOLL_CTL_DEL, fd, &event)
    }

    /// The events land in one buffer allocated for the thread's life, not in an Array: Swift
    /// 6.3's optimizer drops the release of an array slice iterated in a loop that never exits,
    /// so in release builds every pass copied the array and leaked the old copy.
    private func run() {
        let capacity: Int32 = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        events.initialize(repeating: epoll_event(), count: Int(capacity))
        while true {
            let count = epoll_wait(self.poll, events, capacity, -1)
            guard count > 0 else { continue }  // EINTR
            for index in 0..<Int(count) {
                let token = events[index].data.u64
                let handler = self.handlers.withLock { $0[token >> 1] }
                handler?(token & 1, events[index].events)
            }
        }
    }
}

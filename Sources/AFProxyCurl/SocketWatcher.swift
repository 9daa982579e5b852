import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// The epoll set behind `curl_multi_socket_action`: curl says which sockets to watch for what
/// (its socket callback) and when it next needs time (its timer callback); the loop waits here
/// and hands back only the sockets that are ready. Unlike `curl_multi_poll`, no call walks every
/// transfer, so an iteration costs what is ready, not what is open.
///
/// An eventfd in the same set wakes the thread when another thread enqueued a command.
final class SocketWatcher {
    private let epoll: Int32
    private let wakeFD: Int32
    private var watched = Set<Int32>()
    /// When curl wants `CURL_SOCKET_TIMEOUT`; nil when it has no timer.
    private(set) var deadline: ContinuousClock.Instant?
    private var events = [epoll_event](repeating: epoll_event(), count: 256)

    init() {
        self.epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        self.wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(self.epoll >= 0 && self.wakeFD >= 0, "cannot create the session's epoll set")
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = self.wakeFD
        epoll_ctl(self.epoll, EPOLL_CTL_ADD, self.wakeFD, &event)
    }

    deinit {
        close(self.epoll)
        close(self.wakeFD)
    }

    /// Thread-safe: a write to the eventfd.
    func wakeup() {
        var one: UInt64 = 1
        _ = write(self.wakeFD, &one, 8)
    }

    /// Installs the callbacks on `multi`; `self` must outlive it.
    func attach(to multi: UnsafeMutableRawPointer) {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        _ = afc_multi_setopt_socket_callback(multi, { _, socket, what, userdata, _ in
            Unmanaged<SocketWatcher>.fromOpaque(userdata!).takeUnretainedValue().watch(socket, what)
            return 0
        })
        _ = afc_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, userdata)
        _ = afc_multi_setopt_timer_callback(multi, { _, timeout, userdata in
            let watcher = Unmanaged<SocketWatcher>.fromOpaque(userdata!).takeUnretainedValue()
            watcher.deadline = timeout < 0 ? nil : .now + .milliseconds(timeout)
            return 0
        })
        _ = afc_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, userdata)
    }

    private func watch(_ socket: curl_socket_t, _ what: Int32) {
        if what == CURL_POLL_REMOVE {
            if self.watched.remove(socket) != nil {
                epoll_ctl(self.epoll, EPOLL_CTL_DEL, socket, nil)
            }
            return
        }
        var event = epoll_event()
        event.data.fd = socket
        if what & CURL_POLL_IN != 0 { event.events |= EPOLLIN.rawValue }
        if what & CURL_POLL_OUT != 0 { event.events |= EPOLLOUT.rawValue }
        let operation = self.watched.insert(socket).inserted ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        epoll_ctl(self.epoll, operation, socket, &event)
    }

    /// Waits at most `limit` (less when curl's timer is due sooner) and answers the ready sockets
    /// with their `CURL_CSELECT_*` flags, and whether curl's timer expired.
    func wait(limit: Duration) -> (ready: [(curl_socket_t, Int32)], timerDue: Bool) {
        var timeout = limit
        if let deadline = self.deadline {
            timeout = min(timeout, max(.zero, deadline - .now))
        }
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let count = self.events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(self.epoll, buffer.baseAddress, Int32(buffer.count), milliseconds)
        }
        var ready: [(curl_socket_t, Int32)] = []
        if count > 0 {
            ready.reserveCapacity(Int(count))
            for index in 0..<Int(count) {
                let event = self.events[index]
                let fd = event.data.fd
                if fd == self.wakeFD {
                    var value: UInt64 = 0
                    _ = read(self.wakeFD, &value, 8)
                    continue
                }
                var flags: Int32 = 0
                if event.events & EPOLLIN.rawValue != 0 { flags |= CURL_CSELECT_IN }
                if event.events & EPOLLOUT.rawValue != 0 { flags |= CURL_CSELECT_OUT }
                if event.events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { flags |= CURL_CSELECT_ERR }
                ready.append((fd, flags))
            }
        }
        let timerDue = self.deadline.map { $0 <= .now } ?? false
        if timerDue { self.deadline = nil }
        return (ready, timerDue)
    }
}

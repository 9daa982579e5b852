import AFProxyRules
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
    /// What curl wants watched now.
    private var wanted = Set<Int32>()
    /// What the epoll set holds, with its events. A socket curl stops watching stays registered
    /// until it reports an event nobody wants: curl drops an upstream connection from its watch
    /// list at the end of every response and takes it back for the next request, and keeping it
    /// saves two epoll_ctl calls per request.
    private var registered: [Int32: UInt32] = [:]
    /// Sockets whose connection went back to curl's cache when its transfer ended. An origin has
    /// nothing to say on such a connection: bytes or an end arriving there are a response nobody
    /// asked for (a second answer, a body after a HEAD answer), which the next request reusing
    /// the connection would receive as its own. libcurl 7.88.1 reuses such a connection (fixed
    /// in 8.0), so the watcher shuts it down when it stirs, and curl's next use of it fails at
    /// once and retries on a fresh connection.
    ///
    /// A transfer that takes such a connection from the cache may never tell the watcher: curl
    /// sends the request and reads an answer that is already there without asking for the
    /// socket, and a transfer paused from its write callback then drops it. So a connection
    /// leaves this set when a transfer takes it (the prerequest callback, which names the
    /// connection only by its ports), not only when curl asks to watch it; otherwise the rest
    /// of a live response looked like an unsolicited one and was cut off.
    private var idle: [Int32: ConnectionPorts] = [:]
    /// The easy handle whose transfer asked for each watched socket: bytes arriving count as
    /// that transfer's activity even before curl hands any over (a head line trickled slowly
    /// reaches no callback until it is complete).
    private var owners: [Int32: UnsafeMutableRawPointer] = [:]
    /// The socket of each plain-HTTP connection a transfer read a response on, by its ports (from
    /// the transfer's prerequest callback): curl may finish one transfer and hand its connection
    /// to the next within one `curl_multi_socket_action`, before the finished one is reaped and
    /// its connection marked idle. An answer nobody asked for that came in the same segment as
    /// the end of the last response is in the socket then; the taker's check finds it through
    /// this map (the fuzzing origin's `extra` answers: a HEAD took one for its own).
    private var plainSockets: [ConnectionPorts: Int32] = [:]
    private var plainPorts: [Int32: ConnectionPorts] = [:]
    /// The easy handle that watched each socket before curl stopped watching it, while the socket
    /// stays open: an end arriving there may be the origin giving up on a transfer that waits for
    /// its client's request body, which curl, its send side paused, never reports (`closedUnder`).
    private var lastOwners: [Int32: UnsafeMutableRawPointer] = [:]
    /// Sockets that came to their end after curl stopped watching them, with the handle that last
    /// watched each: the session loop asks each transfer whether that ends it.
    private(set) var closedUnder: [UnsafeMutableRawPointer] = []
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
        _ = afc_multi_setopt_socket_callback(
            multi,
            { easy, socket, what, userdata, _ in
                Unmanaged<SocketWatcher>.fromOpaque(userdata!).takeUnretainedValue().watch(socket, what, for: easy)
                return 0
            })
        _ = afc_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, userdata)
        _ = afc_multi_setopt_timer_callback(
            multi,
            { _, timeout, userdata in
                let watcher = Unmanaged<SocketWatcher>.fromOpaque(userdata!).takeUnretainedValue()
                watcher.deadline = timeout < 0 ? nil : .now + .milliseconds(timeout)
                return 0
            })
        _ = afc_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, userdata)
    }

    /// Installs the close callback on a new easy handle: curl then closes its sockets here, and the
    /// epoll set forgets each before the kernel can hand its number to the next socket (a new
    /// socket with the number of a closed one was taken for the old, still-registered one, and
    /// its transfer waited for curl's timer: 200 ms).
    /// The prerequest callback says which cached connection `transfer` took (see `idle`).
    func adopt(_ handle: EasyHandle, for transfer: UpstreamTransfer) {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        _ = afc_easy_setopt_closesocket_callback(
            handle.raw,
            { userdata, socket in
                Unmanaged<SocketWatcher>.fromOpaque(userdata!).takeUnretainedValue().forget(socket)
                return close(socket)
            })
        _ = afc_easy_setopt_pointer(handle.raw, CURLOPT_CLOSESOCKETDATA, userdata)
        transfer.watcher = self
        _ = afc_easy_setopt_prereq_callback(
            handle.raw,
            { userdata, primaryIP, _, remotePort, localPort in
                let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata!).takeUnretainedValue()
                let ports = ConnectionPorts(local: localPort, remote: remotePort)
                transfer.ports = transfer.isPlainHTTP ? ports : nil
                transfer.watcher?.connectionTaken(ports, by: ObjectIdentifier(transfer), plain: transfer.isPlainHTTP)
                if let denial = DestinationCheck.denial(before: transfer, primaryIP: primaryIP) {
                    transfer.abortReason = .destinationDenied(denial)
                    return CURL_PREREQFUNC_ABORT
                }
                if let next = transfer.redirectOffRoute(to: DestinationCheck.currentURL(of: transfer)) {
                    transfer.rerouteTo = next
                    return CURL_PREREQFUNC_ABORT
                }
                return CURL_PREREQFUNC_OK
            })
        _ = afc_easy_setopt_pointer(handle.raw, CURLOPT_PREREQDATA, Unmanaged.passUnretained(transfer).toOpaque())
    }

    /// Connections transfers took since the finished transfers were last reaped. curl returns a
    /// finished transfer's connection to its cache and may hand it to another transfer in the
    /// same `curl_multi_socket_action` call, before the session loop hears that the first one
    /// finished: marking it idle then would cut the second one off (the soak saw 37 of about
    /// 4000 downloads end this way after 118 KB). By taker, since a transfer that takes a
    /// connection and finishes within one call leaves it idle all the same.
    private var takenSinceReap: [ConnectionPorts: [ObjectIdentifier]] = [:]

    /// The finished transfers of the last call were reaped.
    func reaped() {
        self.takenSinceReap.removeAll(keepingCapacity: true)
    }

    /// A transfer took the connection with these ports: it is no longer idle.
    private func connectionTaken(_ ports: ConnectionPorts, by transfer: ObjectIdentifier, plain: Bool) {
        self.takenSinceReap[ports, default: []].append(transfer)
        if plain, let socket = self.plainSockets[ports], self.idle[socket] == nil, !self.wanted.contains(socket) {
            // Left by a transfer that finished in this very call (not yet marked idle): nothing
            // may be waiting on it before this transfer's request goes out. Not for TLS, whose
            // records (a session ticket) may wait on a socket without being an answer.
            Self.shutDownIfStirred(socket)
        }
        guard !self.idle.isEmpty else { return }
        // Two idle connections to different hosts may share both ports: release every match
        // (an idle connection left unwatched is the old behaviour; a live one cut off is not).
        for (socket, idlePorts) in self.idle where idlePorts == ports {
            self.idle.removeValue(forKey: socket)
            // Bytes (or an end) that came while it was idle, which the watcher has not seen stir
            // yet: a response nobody asked for, which this transfer would take for its own.
            Self.shutDownIfStirred(socket)
        }
    }

    /// The handles whose sockets `wait` found at their end since the last call, emptied.
    func takeClosedUnder() -> [UnsafeMutableRawPointer] {
        defer { self.closedUnder.removeAll(keepingCapacity: true) }
        return self.closedUnder
    }

    /// `easy` is about to be cleaned up: no socket names it as its last owner any more (its
    /// address may come back as another handle's).
    func handleEnded(_ easy: UnsafeMutableRawPointer) {
        guard !self.lastOwners.isEmpty else { return }
        for (socket, owner) in self.lastOwners where owner == easy { self.lastOwners.removeValue(forKey: socket) }
    }

    /// Nothing left to read, and the peer closed (or reset) the connection.
    private static func isAtEnd(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        let peeked = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// Shut down, the connection fails at once and curl sends the request again on a new one.
    private static func shutDownIfStirred(_ socket: Int32) {
        var byte: UInt8 = 0
        let peeked = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if peeked >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
            Self.discardAndShutDown(socket)
        }
    }

    /// What waits on the socket is dropped before it is shut down: Linux still hands out bytes
    /// queued before a `shutdown(SHUT_RD)`, and curl, whose request then failed to go out, read an
    /// unsolicited answer waiting there as the answer to it (the fuzzing origin's `extra`: a HEAD
    /// that never reached the origin got the smuggled 200). Emptied first, the socket reads as
    /// closed, and curl sends the request again on a fresh connection. Bounded: an origin
    /// streaming at it is cut off by the shutdown all the same.
    static func discardAndShutDown(_ socket: Int32) {
        withUnsafeTemporaryAllocation(byteCount: 16 << 10, alignment: 1) { scratch in
            var reads = 0
            while reads < 64, recv(socket, scratch.baseAddress, scratch.count, Int32(MSG_DONTWAIT)) > 0 { reads += 1 }
        }
        shutdown(socket, Int32(SHUT_RDWR))
    }

    /// The transfer on `socket` ended and curl kept the connection for reuse.
    func connectionWentIdle(_ socket: curl_socket_t, ports: ConnectionPorts, by transfer: ObjectIdentifier) {
        guard socket >= 0 else { return }
        if let takers = self.takenSinceReap[ports] {
            // Taken by another transfer after this one took it (or at all, if this one took it
            // in an earlier call): already in other hands.
            let since = takers.lastIndex(of: transfer).map { $0 + 1 } ?? 0
            if since < takers.count { return }
        }
        self.idle[socket] = ports
        self.lastOwners.removeValue(forKey: socket)
        if self.registered[socket] == nil {
            // Watch it for stirring even if curl never asked for input on it.
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.fd = socket
            if epoll_ctl(self.epoll, EPOLL_CTL_ADD, socket, &event) == 0 { self.registered[socket] = EPOLLIN.rawValue }
        }
    }

    private func forget(_ socket: curl_socket_t) {
        if let ports = self.plainPorts.removeValue(forKey: socket), self.plainSockets[ports] == socket {
            self.plainSockets.removeValue(forKey: ports)
        }
        self.wanted.remove(socket)
        self.owners.removeValue(forKey: socket)
        self.lastOwners.removeValue(forKey: socket)
        self.idle.removeValue(forKey: socket)
        if self.registered.removeValue(forKey: socket) != nil {
            epoll_ctl(self.epoll, EPOLL_CTL_DEL, socket, nil)
        }
    }

    /// A plain-HTTP transfer reads on `socket`: remember which connection (ports) it is.
    private func learnPorts(of socket: curl_socket_t, easy: UnsafeMutableRawPointer) {
        var userdata: UnsafeMutableRawPointer? = nil
        _ = afc_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &userdata)
        guard let userdata, let ports = Unmanaged<UpstreamTransfer>.fromOpaque(userdata).takeUnretainedValue().ports
        else { return }
        if let old = self.plainPorts[socket], old != ports { self.plainSockets.removeValue(forKey: old) }
        self.plainPorts[socket] = ports
        self.plainSockets[ports] = socket
    }

    /// The easy handle that last asked to watch `socket`, while curl watches it.
    func owner(of socket: curl_socket_t) -> UnsafeMutableRawPointer? {
        self.owners[socket]
    }

    private func watch(_ socket: curl_socket_t, _ what: Int32, for easy: UnsafeMutableRawPointer?) {
        if what == CURL_POLL_REMOVE {
            self.wanted.remove(socket)
            if let owner = self.owners.removeValue(forKey: socket) { self.lastOwners[socket] = owner }
            return
        }
        self.wanted.insert(socket)
        self.lastOwners.removeValue(forKey: socket)
        // Not only when the owner changes: a fresh connection's transfer first asks for output
        // alone (the connect), and its ports are known only from the prerequest callback on.
        if what & CURL_POLL_IN != 0, let easy, self.owners[socket] != easy || self.plainPorts[socket] == nil {
            self.learnPorts(of: socket, easy: easy)
        }
        self.owners[socket] = easy
        self.idle.removeValue(forKey: socket)
        var events: UInt32 = 0
        if what & CURL_POLL_IN != 0 { events |= EPOLLIN.rawValue }
        if what & CURL_POLL_OUT != 0 { events |= EPOLLOUT.rawValue }
        if let current = self.registered[socket], current == events { return }
        var event = epoll_event()
        event.events = events
        event.data.fd = socket
        // The descriptor may have been closed (which drops it from the set) and its number reused:
        // try the likely operation, then the other.
        if self.registered[socket] != nil {
            if epoll_ctl(self.epoll, EPOLL_CTL_MOD, socket, &event) != 0 && errno == ENOENT {
                epoll_ctl(self.epoll, EPOLL_CTL_ADD, socket, &event)
            }
        } else if epoll_ctl(self.epoll, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST {
            epoll_ctl(self.epoll, EPOLL_CTL_MOD, socket, &event)
        }
        self.registered[socket] = events
    }

    private func unregister(_ socket: curl_socket_t) {
        self.registered.removeValue(forKey: socket)
        epoll_ctl(self.epoll, EPOLL_CTL_DEL, socket, nil)
    }

    /// Waits at most `limit` (less when curl's timer is due sooner) and answers the ready sockets
    /// with their `CURL_CSELECT_*` flags, and whether curl's timer expired.
    func wait(limit: Duration) -> (ready: [(curl_socket_t, Int32)], timerDue: Bool) {
        var timeout = limit
        if let deadline = self.deadline {
            timeout = min(timeout, max(.zero, deadline - .now))
        }
        let count = self.events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(self.epoll, buffer.baseAddress, Int32(buffer.count), Int32(timeout.milliseconds))
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
                guard self.wanted.contains(fd) else {
                    // A socket curl does not watch now stirred: a paused transfer's (it is
                    // registered again when the transfer resumes), or an idle connection's.
                    if self.idle.removeValue(forKey: fd) != nil {
                        Self.discardAndShutDown(fd)
                    } else if let owner = self.lastOwners.removeValue(forKey: fd), Self.isAtEnd(fd) {
                        self.closedUnder.append(owner)
                    }
                    self.unregister(fd)
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

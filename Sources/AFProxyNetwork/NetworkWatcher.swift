import AFProxyModel
import CNetlink
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Follows the network as AFNetworkReachabilityManager does: a netlink route socket tells it of
/// every change to links, addresses and routes, `NetlinkSync` keeps the tables, and each change of
/// `Reachability` (status, interface or kind) goes to `onChange`, on the watcher's thread.
///
/// Why a thread of its own rather than a NIO-registered descriptor: NIO's channels know IP and
/// Unix sockets, and a netlink datagram's sender address is neither; a selectable-event source
/// for a raw descriptor is not public API. Messages are rare (a handful when a cable is pulled),
/// so one thread asleep in `poll` on the socket and an eventfd (to stop) costs nothing, and
/// keeps the session thread and the event loops free of it. Nothing polls on a timer.
package final class NetworkWatcher: Sendable {
    package typealias Observer = @Sendable (Reachability) -> Void

    private let onChange: Observer
    fileprivate let onFailure: @Sendable (NetlinkError) -> Void
    private let sysfsRoot: String
    private let wake: CInt
    private let thread = Locked<pthread_t?>(nil)
    private let stopping = Locked(false)
    private let latest = Locked(Reachability.unknown)

    /// `onFailure`: the socket failed after it was opened (the thread ends, the status is
    /// reported `unknown` with the reason, since it is no longer followed); called once.
    package init(
        sysfsRoot: String = "/sys/class/net", onChange: @escaping Observer,
        onFailure: @escaping @Sendable (NetlinkError) -> Void = { _ in }
    ) {
        self.onChange = onChange
        self.onFailure = onFailure
        self.sysfsRoot = sysfsRoot
        self.wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
    }

    deinit {
        if self.wake >= 0 { close(self.wake) }
    }

    /// The last value reported; `unknown` before the first.
    package var reachability: Reachability { self.latest.withLock { $0 } }

    /// Opens the socket and starts the thread. On failure nothing runs and the status stays
    /// `unknown`: the daemon serves on without reachability rather than not at all.
    package func start() throws(NetlinkError) {
        guard self.wake >= 0 else { throw NetlinkError("eventfd") }
        let socket = try NetlinkSocket()
        let body = WatcherBody(watcher: self, socket: socket)
        let box = Unmanaged.passRetained(body).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                let body = Unmanaged<WatcherBody>.fromOpaque(argument!).takeRetainedValue()
                body.run()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<WatcherBody>.fromOpaque(box).release()
            throw NetlinkError("pthread_create", errno: rc)
        }
        // A `stop()` that ran while the thread was being created found no thread to join: the
        // thread then sees the stop (flag and eventfd) and ends, and is joined here.
        let stoppedMeanwhile = self.thread.withLock { value -> Bool in
            if self.isStopping { return true }
            value = thread
            return false
        }
        if stoppedMeanwhile { pthread_join(thread, nil) }
    }

    /// Stops the thread and closes the socket; no report follows.
    package func stop() {
        self.stopping.withLock { $0 = true }
        var one: UInt64 = 1
        _ = write(self.wake, &one, MemoryLayout<UInt64>.size)
        if let thread = self.thread.withLock({ value in
            defer { value = nil }; return value
        }) {
            pthread_join(thread, nil)
        }
    }

    fileprivate var isStopping: Bool { self.stopping.withLock { $0 } }
    fileprivate var wakeDescriptor: CInt { self.wake }

    fileprivate func report(_ reachability: Reachability) {
        self.latest.withLock { $0 = reachability }
        self.onChange(reachability)
    }

    fileprivate func kind(of link: NetworkLink) -> InterfaceKind {
        InterfaceKind.classify(
            name: link.name, hardwareType: link.hardwareType,
            facts: InterfaceFacts.read(interface: link.name, root: self.sysfsRoot))
    }
}

/// The watcher thread's own state: the socket, the conversation, the last decision.
private final class WatcherBody {
    let watcher: NetworkWatcher
    let socket: NetlinkSocket
    var sync = NetlinkSync()
    var tracker = ReachabilityTracker()
    var lastDecision: ReachabilityDecision?
    var lastKind: InterfaceKind?
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    init(watcher: NetworkWatcher, socket: consuming NetlinkSocket) {
        self.watcher = watcher
        self.socket = socket
    }

    func run() {
        do throws(NetlinkError) {
            try self.sendNextRequest()
            while !self.watcher.isStopping {
                var fds = [
                    pollfd(fd: self.socket.descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: self.watcher.wakeDescriptor, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&fds, nfds_t(fds.count), -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    throw NetlinkError("poll(netlink)")
                }
                if fds[1].revents != 0 { break }
                try self.drain()
                try self.sendNextRequest()
                self.decide()
            }
        } catch {
            self.failed(error)
        }
    }

    /// The thread ends: the status becomes `unknown` with the reason, reported and logged once.
    func failed(_ error: NetlinkError) {
        guard let unknown = self.tracker.failed("the netlink socket failed: \(error)", now: Date()) else { return }
        self.watcher.onFailure(error)
        self.watcher.report(unknown)
    }

    private func drain() throws(NetlinkError) {
        while true {
            switch try self.socket.receive(into: &self.buffer) {
            case .empty: return
            case .overrun: self.sync.lostMessages()
            case .messages(let bytes):
                for message in NetlinkMessage.parse(bytes) { self.sync.receive(message) }
            }
        }
    }

    private func sendNextRequest() throws(NetlinkError) {
        if let (dump, sequence) = self.sync.nextRequest() {
            try self.socket.send(NetlinkRequest.dump(dump, sequence: sequence))
        }
    }

    private func decide() {
        let decision = ReachabilityDecision.decide(self.sync.tables, synced: self.sync.isSynced)
        guard decision != self.lastDecision else { return }
        // sysfs is read only when the chosen interface is another one.
        var kind: InterfaceKind?
        if let link = decision.link {
            kind = link.name == self.lastDecision?.link?.name ? self.lastKind : self.watcher.kind(of: link)
        }
        self.lastDecision = decision
        self.lastKind = kind
        if let changed = self.tracker.update(decision, kind: kind, now: Date()) {
            self.watcher.report(changed)
        }
    }
}

import AFProxyModel
import AFProxyRules
import AFProxyTransport
import CCurl
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The upstream session: one curl multi handle driven by one dedicated thread, as one
/// NSURLSession drives its tasks on one serial delegate queue. Every curl call happens on that
/// thread; other threads only enqueue commands and wake it through an eventfd.
///
/// The loop (see `SessionLoop`) drains the inbox, sleeps in epoll until a socket is ready or
/// curl's timer is due, runs `curl_multi_socket_action` for just those, reaps finished transfers
/// and lets each delegate flush what it gathered in one hop. `curl_multi_socket_action` rather
/// than `curl_multi_poll`: with many keep-alive connections open, poll and perform walk every
/// transfer on every wakeup, which with many connections becomes a large share of the session
/// thread's time.
package final class UpstreamSession: Sendable {
    enum Command {
        case start(UpstreamTransfer)
        case suspend(UpstreamTransfer)
        case resume(UpstreamTransfer)
        case continueReceiving(UpstreamTransfer)
        case continueSending(UpstreamTransfer)
        case cancel(UpstreamTransfer, TaskFailure)
    }

    struct Inbox {
        var commands: [Command] = []
        var stopping = false
    }

    /// The knobs it was made with; the tunnel layer reads `connectTimeout` from here too.
    package let configuration: UpstreamConfiguration
    /// The upstream proxy of curl's transfers and of the tunnels (`upstream-proxy`), which a
    /// reload swaps.
    package let liveUpstreamProxy: LiveUpstreamProxy
    private let loop: SessionLoop
    private let inbox = Locked(Inbox())
    private let thread = Locked<pthread_t?>(nil)
    /// Loop iterations so far; the systemd watchdog pings only while this moves.
    private let heartbeat = Atomic<UInt64>(0)
    /// Transfers started on this session so far (`afproxy_session_transfers_total`).
    private let started = Atomic<UInt64>(0)

    /// `tlsSessions`: the TLS session cache it shares with the other sessions (a cache of its
    /// own when alone).
    package convenience init(
        configuration: UpstreamConfiguration = .init(), liveUpstreamProxy: LiveUpstreamProxy = .init()
    ) {
        self.init(configuration: configuration, liveUpstreamProxy: liveUpstreamProxy, tlsSessions: TLSSessionCache())
    }

    init(configuration: UpstreamConfiguration, liveUpstreamProxy: LiveUpstreamProxy, tlsSessions: TLSSessionCache) {
        CurlGlobal.initializeOnce()
        self.configuration = configuration
        self.liveUpstreamProxy = liveUpstreamProxy
        self.loop = SessionLoop(
            configuration: configuration, liveUpstreamProxy: liveUpstreamProxy, tlsSessions: tlsSessions)
    }

    /// Starts the session thread, named `name` (at most 15 bytes kept) where top, perf and
    /// `ps -L` show threads.
    package func run(name: String = "afproxy-curl") {
        let box = Unmanaged.passRetained(
            ThreadBody { [self] in
                Self.nameThread(name)
                self.threadMain()
            }
        ).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                let body = Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue()
                body.run()
                return nil
            }, box)
        precondition(rc == 0, "cannot start the session thread: \(rc)")
        self.thread.withLock { $0 = thread }
    }

    /// Names the calling thread through /proc: glibc's pthread_setname_np is hidden behind
    /// _GNU_SOURCE, which Swift's Glibc module does not define. Best effort.
    private static func nameThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    /// Cancels what is still running and stops the thread.
    package func shutdown() {
        self.inbox.withLock { $0.stopping = true }
        self.loop.wakeup()
        if let thread = self.thread.withLock({ value in
            defer { value = nil }; return value
        }) {
            pthread_join(thread, nil)
        }
    }

    package var iterations: UInt64 { self.heartbeat.load(ordering: .relaxed) }
    package var transfersStarted: UInt64 { self.started.load(ordering: .relaxed) }

    /// The handle of one exchange on this session, reporting to `delegate` on the session
    /// thread. Nothing is enqueued, and no curl handle made, until the task calls `start()`.
    package func makeTransfer(_ request: TransferRequest, delegate: any HTTPTransferDelegate) -> any HTTPTransfer {
        UpstreamTransfer(request, session: self, delegate: delegate)
    }

    // The transfer's commands (`UpstreamTransfer+HTTPTransfer`), queued for the session thread.
    func start(_ transfer: UpstreamTransfer) {
        self.started.add(1, ordering: .relaxed)
        self.enqueue(.start(transfer))
    }
    func suspend(_ transfer: UpstreamTransfer) { self.enqueue(.suspend(transfer)) }
    func resume(_ transfer: UpstreamTransfer) { self.enqueue(.resume(transfer)) }
    /// The delegate can take response bytes again.
    func continueReceiving(_ transfer: UpstreamTransfer) { self.enqueue(.continueReceiving(transfer)) }
    /// The delegate has request bytes again.
    func continueSending(_ transfer: UpstreamTransfer) { self.enqueue(.continueSending(transfer)) }
    func cancel(_ transfer: UpstreamTransfer, reason: TaskFailure) {
        self.enqueue(.cancel(transfer, reason))
    }

    private func enqueue(_ command: Command) {
        // Wake the thread only when the inbox turns non-empty: the loop drains all of it per
        // iteration, and a wakeup stays pending until the next poll, so none is lost.
        let wasEmpty = self.inbox.withLock { inbox in
            inbox.commands.append(command)
            return inbox.commands.count == 1
        }
        if wasEmpty { self.loop.wakeup() }
    }

    private func threadMain() {
        var commands: [Command] = []
        while true {
            let stopping = self.inbox.withLock { inbox in
                swap(&inbox.commands, &commands)
                return inbox.stopping
            }
            for command in commands { self.loop.handle(command) }
            commands.removeAll(keepingCapacity: true)
            if stopping { break }
            self.loop.iterate()
            self.heartbeat.add(1, ordering: .relaxed)
        }
        self.loop.cancelAll()
    }
}

private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// `curl_global_init` must run once, before any other thread uses curl.
enum CurlGlobal {
    private static let once: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    static func initializeOnce() { _ = Self.once }
}

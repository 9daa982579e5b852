import AFProxyModel

/// A task: what the registry holds and the verbs act on, whatever carries its bytes. Each kind
/// is a task, the delegate that records what its transport reports, and the one owner of its
/// state machine. A task knows the daemon only through its `TaskContext` (the
/// `UpstreamTransport`, the event bus, the buffer budget, the throttler, the destination rules,
/// its completion); in the daemon the transport is the curl session and the tunnel relay. An
/// HTTP task describes its exchange (`TransferRequest`), the transport makes the handle
/// (`makeTransfer`), and the task commands that handle and hears it as its delegate:
///
/// | task           | what executes it (daemon's transport)             | its state machine         |
/// |----------------|---------------------------------------------------|---------------------------|
/// | `HTTPTask`     | an `HTTPTransfer` (curl's `UpstreamTransfer`)     | `HTTPTaskStateMachine`    |
/// | `StreamTask`   | `TunnelTransport` (NIO relay, the client's loop)  | `StreamTaskStateMachine`  |
/// | `DownloadTask` | one `HTTPTransfer` an attempt; its file on an `IOLane` | `DownloadStateMachine` |
///
/// # The task contract
///
/// Every event a task sees goes through its state machine, under the task's lock; the machine
/// answers actions, which the task performs after the lock is released (pause or continue its
/// transport, hold or release the client's reads, publish an event, finish). No other object
/// keeps a copy of the task's state: a transport remembers only what it was last told to do.
///
/// Threads, and who calls what:
/// - **Any thread** (the control server, the daemon): `record()`, `state`, the byte counts and
///   the verbs `suspend()`, `resume()`, `cancel(_:)`. A verb that applies has changed the state
///   when it returns (a suspended task counts no further byte from then on); the transport
///   carries it out afterwards. An illegal verb throws `IllegalTransition` and changes nothing.
///   `suspended` and `resumed` are published by the actions, so exactly once per real change.
/// - **The session thread** (the transport's: in the daemon `UpstreamSession`'s one thread)
///   calls an `HTTPTask` as its transfer's `HTTPTransferDelegate`, in this order:
///   1. each interim 1xx head, then the final head once, when it is complete and its framing
///      checked (not at all when the transfer fails before it: an invalid head fails it);
///   2. body bytes, and requests for upload bytes as curl wants them, either of which may answer
///      "no more now" (window full, suspended, nothing buffered): that direction then pauses
///      until the task continues it (`continueReceiving`, `continueSending`, `resume`), and
///      response bytes refused while suspended are offered again then, so nothing is lost;
///   3. `transferDidFlush` after each socket curl served on which 1 or 2 happened: what was
///      gathered goes to the client in one hop rather than one per callback;
///   4. completion exactly once, last (on success the transfer's `trailers` are complete).
///   The task must never block there: a blocked delegate stalls every transfer. A
///   `DownloadTask` copies its body bytes to its lane and answers "no more now" while more than
///   `DownloadStateMachine.unwrittenLimit` of them wait for the disk; its writer continues it.
/// - **The client connection's event loop** calls an `HTTPTask` with the request body
///   (`appendRequestBody`, `finishRequestBody`), acknowledgements of written response bytes
///   (`clientDidWrite`) and `clientClosed`/`abandon`; the task calls its `TaskClient` from the
///   session thread or a verb's thread, and the client hops to its loop.
/// - A `StreamTask` lives on the client connection's event loop: its `TunnelTransport`, the relay
///   and the `TunnelTransferDelegate` reports (connected, first byte, completed once and last)
///   run there; only its verbs and `record()` come from other threads.
/// - **The I/O executor** (`IOExecutor`, a few threads of a `NIOThreadPool` of its own) runs a
///   task's blocking disk work: a `DownloadTask`'s preparation of its partial file, its writes,
///   the end of each attempt, its naming by the answer, checksum, sync, rename and removal, one
///   job after another on the task's `IOLane`; the download journal and the rule sets' state
///   files are written on lanes of their own. A slow disk holds that download only.
/// - What runs where, in the whole daemon: three mechanisms, and nothing else runs a task's work.
///   1. **NIO event loops**: sockets and timers (client connections, tunnels, the four servers,
///      their idle and request timers, the feeds' ticks, a download's wait before its next
///      attempt: `DownloadService.schedule`).
///   2. **Threads of our own that wait in `poll` or `epoll_wait`**: the session thread (every
///      curl call), the network watcher's netlink socket, and the splice watcher (spliced
///      tunnels' readiness, handed to their event loops: `SpliceWatcher`); each owns a descriptor
///      nothing else may touch.
///   3. **`NIOThreadPool`s for blocking work**: the I/O executor (disk: downloads, journal,
///      state files; and, on a lane of its own, the client-process lookup, one at a time so
///      that its finder keeps caches without a lock) and NIO's shared pool (getaddrinfo,
///      password checks, the control endpoints that block: a pin probe, starting a download).
///      One mechanism, two pools: a disk that stops answering holds the executor's threads and
///      must not hold name resolution and logins with them.
///   Swift concurrency stays at the daemon's top level only: swift-service-lifecycle's
///   `ServiceGroup` and the daemon's own periodic loops (`DaemonService`: STATUS= lines, the
///   stall sweep, the watchdog pings, the grace period's wait, the task log's batches), which
///   call the manager's verbs and read its state but run none of a task's work.
/// - Completion: the task records its end, answers its client, publishes `completed` and leaves
///   the registry for the history, in that order, once (`TaskContext.completed`, which is
///   `SessionManager.complete`).
///   Completion racing a cancel: whichever reaches the machine first decides; a transfer that
///   completed before the cancel reached its transport completed.
protocol ManagedTask: AnyObject, Sendable {
    var id: Int { get }
    var kind: TaskKind { get }
    var state: TaskState { get }
    var bytesUp: Int64 { get }
    var bytesDown: Int64 { get }
    /// Where the lookup of the client's process puts what it finds (`SessionManager+ClientProcess`).
    var processSlot: ClientProcessSlot? { get }
    /// The task as the control API shows it, now.
    func record() -> TaskRecord
    func suspend() throws(IllegalTransition)
    func resume() throws(IllegalTransition)
    /// `failure` becomes the task's error (`.canceled()` when a person asked for it).
    func cancel(_ failure: TaskFailure) throws(IllegalTransition)
}

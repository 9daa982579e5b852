import AFProxyCurl
import AFProxyModel
import AFProxyRules
import AFProxyTunnel
import Logging
import NIOCore

/// The session manager, as AFURLSessionManager is to NSURLSession: it creates each task and its
/// delegate, keeps the registry of live tasks keyed by id (behind a lock, as
/// `mutableTaskDelegatesKeyedByTaskIdentifier` is), applies the verbs, publishes events, and
/// moves a task to the bounded history the moment it completes. HTTP tasks and CONNECT tunnels
/// (stream tasks) share the registry through `ManagedTask`, which holds the task contract. The
/// upstream I/O is its `UpstreamTransport`'s; each task gets what it needs as a `TaskContext`,
/// not a pointer back here. Download tasks' file work runs on the I/O executor's lanes.
package final class SessionManager: Sendable {
    package let events: EventBus
    /// What the tasks' receive windows may hold beyond their minimum, together.
    package let budget: BufferBudget
    let registry: Locked<Registry>
    /// Download tasks: their validation, naming, slots, journal, parking and pin probes.
    package let downloads: DownloadService
    /// What each new task is given instead of a pointer back here: the transport its transfers
    /// and tunnels run on (the curl session and the tunnel relay in the daemon, an in-memory one
    /// in tests), the transparent-resume limit (`resume-attempts`; 0: `transparent-resume = no`).
    let taskContext: TaskContext
    /// The network as last reported (`networkChanged`), and what its loss does to the tasks.
    let network: Locked<NetworkState>
    /// Throttle, hold and destination rules, and the state files of those set at runtime.
    package let rules: RuleBook
    /// The safety net's view of tasks without a client (`endStalledTasks`).
    let stallWatch = Locked(StallWatch())

    struct NetworkState {
        var reachability = Reachability.unknown
        var policy: NetworkLossPolicy
        /// Proxied tasks suspended because the network went away (`suspend-all`): resumed when it returns.
        var suspendedByNetwork: Set<Int> = []
    }
    private let startedAt = ContinuousClock.now

    struct Registry {
        var live: [Int: any ManagedTask] = [:]
        var history: TaskHistory
        var nextID = 1
        var served = 0
        var failed = 0
        var canceled = 0
        var bytesUp: Int64 = 0
        var bytesDown: Int64 = 0
        /// Tasks started since start, by kind, for the metrics (`taskCounts()`): counted here, under
        /// the lock already taken, because a `created` subscriber would build a record per request.
        var started: [TaskKind: Int] = [:]
    }

    package init(
        transport: any UpstreamTransport, historyCapacity: Int, bufferBudget: Int = 64 << 20,
        downloads: DownloadSettings = DownloadSettings(), transparentResumeLimit: Int = 0,
        networkLoss: NetworkLossPolicy = .waitDownloads, logger: Logger? = nil,
        rules: RuleBook? = nil, timers: (any EventLoopGroup)? = nil, tunnelTLS: (any TunnelTLSMaker)? = nil
    ) {
        // Without a book of its own (tests), runtime rules are kept beside the downloads' journal.
        let rules = rules ?? RuleBook(stateDirectory: downloads.stateDirectory, logger: logger)
        self.rules = rules
        self.network = Locked(NetworkState(policy: networkLoss))
        self.budget = BufferBudget(limit: bufferBudget)
        // Built from the parts rather than from `self`, so that a task's context holds no manager.
        let registry = Locked(Registry(history: TaskHistory(capacity: historyCapacity)))
        let events = EventBus()
        let throttler = rules.throttle
        self.registry = registry
        self.events = events
        var context = TaskContext(
            transport: transport, events: events, budget: self.budget, throttler: throttler,
            transparentResumeLimit: transparentResumeLimit,
            destinations: { rules.destinationPolicy },
            completed: { task in Self.complete(task, registry: registry, events: events, throttler: throttler) })
        if let tunnelTLS { context.tunnelTLS = tunnelTLS }
        self.taskContext = context
        self.downloads = DownloadService(
            settings: downloads, registry: registry, context: self.taskContext, holds: rules.holds, pins: rules.pins,
            network: self.network, logger: logger, timers: timers)
    }

    /// Registers a task for `request`, publishes `created` and starts its transfer, or, when a
    /// hold rule catches it, publishes `held` and leaves it suspended before anything was sent.
    package func startTask(_ request: ProxyRequest, client: any TaskClient) -> HTTPTask {
        let heldBy = self.holds.catchTask(HoldFacts(request))
        let options =
            request.isIntercepted
            ? self.downloads.interceptedTransferOptions(host: request.host) : .proxy
        let task = self.register(request.kind) { id in
            HTTPTask(
                id: id, request: request, client: client, context: self.taskContext, heldBy: heldBy, options: options)
        }
        self.events.publish(.created, task.record())
        task.begin()
        return task
    }

    /// Registers a tunnel to `request.authority`, publishes `created` and starts connecting
    /// upstream on `eventLoop`, the client connection's loop, where the relay will run too; when
    /// a hold rule catches it, publishes `held` and connects nothing until it is released.
    package func startStream(_ request: StreamRequest, on eventLoop: any EventLoop) -> StreamTask {
        let heldBy = self.holds.catchTask(HoldFacts(request))
        let upgrade = request.upgrade.map { upgrade in
            TunnelUpgrade(head: upgrade.head, tls: upgrade.tls ? self.tunnelTLS(host: request.host) : nil)
        }
        let task = self.register(.stream) { id in
            StreamTask(
                id: id, request: request, eventLoop: eventLoop, context: self.taskContext, heldBy: heldBy,
                upgrade: upgrade)
        }
        self.events.publish(.created, task.record())
        task.begin()
        return task
    }

    /// How a `wss://` upgrade's tunnel verifies `host`: as an intercepted request to it would.
    private func tunnelTLS(host: String) -> TunnelTLS {
        let options = self.downloads.interceptedTransferOptions(host: host)
        let pins = options.pins?.split(separator: ";").map(String.init) ?? []
        return TunnelTLS(
            host: host, caFile: options.caFile, pins: pins, pinsStandalone: options.pinsStandalone,
            maker: self.taskContext.tunnelTLS)
    }

    /// The one way a new task of any kind enters the registry (`Registry.register`).
    func register<NewTask: ManagedTask>(_ kind: TaskKind, _ make: (Int) -> NewTask) -> NewTask {
        self.registry.register(kind, make)
    }

    /// Called by a task once it ended, once (its `TaskContext.completed`): on the session thread
    /// for an HTTP task, on the client's event loop for a tunnel, on its lane for a download.
    static func complete(
        _ task: any ManagedTask, registry: Locked<Registry>, events: EventBus, throttler: Throttler
    ) {
        let record = task.record()
        throttler.forget(task: task.id)
        registry.withLock { registry in
            registry.live.removeValue(forKey: task.id)
            registry.history.append(record)
            registry.served += 1
            if record.isFailure { registry.failed += 1 }
            if record.isCancellation { registry.canceled += 1 }
            registry.bytesUp += record.upload.completed
            registry.bytesDown += record.download.completed
        }
        events.publish(.completed, record)
        Self.recordProcessLater(of: task, in: record, registry: registry)
    }

    // MARK: queries

    package func task(id: Int) -> TaskRecord? {
        let (live, recorded) = self.registry.withLock { ($0.live[id], $0.history.record(id: id)) }
        return live?.record() ?? recorded
    }

    /// Live tasks by id; with `includeHistory`, the completed records first, oldest first.
    package func tasks(includeHistory: Bool) -> [TaskRecord] {
        let (live, history) = self.registry.withLock { registry in
            (Array(registry.live.values), includeHistory ? registry.history.records : [])
        }
        return history + live.sorted { $0.id < $1.id }.map { $0.record() }
    }

    /// The daemon's last step, once every service stopped: the tasks still live (parked
    /// downloads, their journal written) leave the registry, so that the references between the
    /// registry, its tasks and the download service do not outlive the daemon; LeakSanitizer
    /// reports them at exit otherwise. Released outside the lock.
    package func releaseLiveTasks() {
        let released = self.registry.withLock { registry in
            defer { registry.live.removeAll() }
            return Array(registry.live.values)
        }
        let waiting = self.downloads.scheduler.forgetWaiting()
        withExtendedLifetime((released, waiting)) {}
    }

    package var liveCount: Int { self.registry.withLock { $0.live.count } }

    package func stats() -> SessionStats {
        let (live, registry) = self.registry.withLock { (Array($0.live.values), $0) }
        var stats = SessionStats()
        for task in live {
            stats.byState[task.state.rawValue, default: 0] += 1
            stats.byKind[task.kind.rawValue, default: 0] += 1
            stats.bytesUp += task.bytesUp
            stats.bytesDown += task.bytesDown
        }
        stats.live = live.count
        stats.served = registry.served
        stats.failed = registry.failed
        stats.canceled = registry.canceled
        stats.bytesUp += registry.bytesUp
        stats.bytesDown += registry.bytesDown
        stats.history = registry.history.count
        stats.uptimeSeconds = Double((ContinuousClock.now - self.startedAt).components.seconds)
        stats.stateFiles = self.stateFileProblems()
        return stats
    }

    // MARK: verbs

    package func suspend(id: Int) throws(ControlError) -> TaskRecord {
        try self.apply(.suspend, to: id)
    }

    package func resume(id: Int) throws(ControlError) -> TaskRecord {
        try self.apply(.resume, to: id)
    }

    package func cancel(id: Int) throws(ControlError) -> TaskRecord {
        try self.apply(.cancel, to: id)
    }

    /// Cancels with `failure` as the task's error rather than a person's `canceled`.
    package func cancel(id: Int, because failure: TaskFailure) throws(ControlError) -> TaskRecord {
        try self.apply(.cancel, to: id, failure: failure)
    }

    /// Every live task that is running (suspend) or suspended (resume); answers the changed ones.
    package func suspendAll() -> [TaskRecord] {
        self.applyAll(.suspend)
    }
    package func resumeAll() -> [TaskRecord] {
        self.applyAll(.resume)
    }

    private func apply(
        _ verb: TaskVerb, to id: Int, failure: TaskFailure = .canceled()
    ) throws(ControlError) -> TaskRecord {
        let (live, recorded) = self.registry.withLock { ($0.live[id], $0.history.record(id: id)) }
        guard let task = live else {
            if let recorded {
                throw ControlError.illegal(IllegalTransition(verb: verb.rawValue, state: recorded.state))
            }
            throw ControlError.unknownTask(id)
        }
        do {
            // The task publishes `suspended` or `resumed` itself, on a real change.
            switch verb {
            case .suspend: try task.suspend()
            case .resume: try task.resume()
            case .cancel: try task.cancel(failure)
            }
        } catch {
            throw ControlError.illegal(error)
        }
        return task.record()
    }

    private func applyAll(_ verb: TaskVerb) -> [TaskRecord] {
        let live = self.registry.withLock { Array($0.live.values) }.sorted { $0.id < $1.id }
        return live.compactMap { task in
            try? self.apply(verb, to: task.id)
        }
    }
}

/// Why a verb was refused: the control API answers 404 or 409.
package enum ControlError: Error, Sendable, Equatable {
    case unknownTask(Int)
    case illegal(IllegalTransition)
}

extension Locked where Value == SessionManager.Registry {
    /// The one way a new task of any kind enters the registry: `make` builds it with the next id,
    /// under the registry's lock, so ids are handed out in order and a task is live (and counted
    /// as started, for the metrics) before anything can ask for it. Restored downloads keep the
    /// ids they had (`DownloadService.restore`).
    func register<NewTask: ManagedTask>(_ kind: TaskKind, _ make: (Int) -> NewTask) -> NewTask {
        self.withLock { registry in
            let task = make(registry.nextID)
            registry.nextID += 1
            registry.live[task.id] = task
            registry.started[kind, default: 0] += 1
            return task
        }
    }
}

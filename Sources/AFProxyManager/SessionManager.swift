import AFProxyModel
import AFProxyRules
import AFProxyStore
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
    /// The live tasks and the history, shared with the download service.
    let registry: TaskRegistry
    /// How every new task comes to be (hold rules, registry, `created`), shared likewise.
    let gate: TaskGate
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
    /// What the daemon's own TLS connections to origins trust (`tls-ca-file`, pins).
    let trust: TransferTrust
    /// Where record rules keep bodies (nil without a state directory).
    package let bodies: BodyStore?
    /// The messages record rules keep of WebSocket tasks, in memory (`WebSocketMessageLog`).
    private let messageBook = WebSocketMessageBook()
    /// Where map-local rules' files are read.
    let localFiles = LocalFileReader()
    /// Where replayed tasks' client calls run (nil in tests: at once).
    let timers: (any EventLoopGroup)?
    /// The safety net's view of tasks without a client (`endStalledTasks`).
    let stallWatch = Locked(StallWatch())

    struct NetworkState {
        var reachability = Reachability.unknown
        var policy: NetworkLossPolicy
        /// Proxied tasks suspended because the network went away (`suspend-all`): resumed when it returns.
        var suspendedByNetwork: Set<Int> = []
    }
    private let startedAt = ContinuousClock.now

    package init(
        transport: any UpstreamTransport, historyCapacity: Int, bufferBudget: Int = 64 << 20,
        recordMaxTotal: Int64 = BodyStore.defaultMaxTotal,
        downloads: DownloadSettings = DownloadSettings(), transparentResumeLimit: Int = 0,
        networkLoss: NetworkLossPolicy = .waitDownloads, logger: Logger? = nil,
        rules: RuleBook? = nil, timers: (any EventLoopGroup)? = nil, tunnelTLS: (any TunnelTLSMaker)? = nil
    ) {
        // Without a book of its own (tests), runtime rules are kept beside the downloads' journal.
        let rules = rules ?? RuleBook(stateDirectory: downloads.stateDirectory, logger: logger)
        self.rules = rules
        let network = Locked(NetworkState(policy: networkLoss))
        self.network = network
        self.trust = TransferTrust(security: rules.security, pins: rules.pins)
        self.budget = BufferBudget(limit: bufferBudget)
        // Built from the parts rather than from `self`, so that a task's context holds no manager.
        let registry = TaskRegistry(historyCapacity: historyCapacity)
        let events = EventBus()
        let throttler = rules.throttle
        self.registry = registry
        self.events = events
        self.gate = TaskGate(registry: registry, rules: rules, events: events)
        var context = TaskContext(
            transport: transport, events: events, budget: self.budget, throttler: throttler,
            transparentResumeLimit: transparentResumeLimit,
            destinations: { rules.destinationPolicy },
            completed: { task in Self.complete(task, registry: registry, events: events, throttler: throttler) })
        if let tunnelTLS { context.tunnelTLS = tunnelTLS }
        context.recordPlan = { rules.recordPlan($0) }
        context.responseHold = { task in rules.holds.catchTask(HoldFacts(task.request), response: true) }
        // Bodies of a previous run belonged to tasks that are gone: they go too.
        let bodies = downloads.stateDirectory.map { BodyStore(directory: "\($0)/bodies", maxTotal: recordMaxTotal) }
        bodies?.clear()
        context.bodies = bodies
        self.bodies = bodies
        self.taskContext = context
        self.timers = timers
        self.downloads = DownloadService(
            settings: downloads, registry: registry, gate: self.gate, context: self.taskContext, trust: self.trust,
            networkIsDown: { network.withLock { $0.holdsNewDownloads } }, logger: logger, timers: timers)
    }

    /// Registers a task for `request`, publishes `created` and starts its transfer, or, when a
    /// hold rule catches it, publishes `held` and leaves it suspended before anything was sent.
    /// A map-remote rule sends it to another origin first; a map-local rule answers it from a
    /// file instead (never held: there is nothing to hold). `edits`: what a replay changed of
    /// the request it sends again.
    package func startTask(_ request: ProxyRequest, client: any TaskClient, edits: [TaskEdit] = []) -> HTTPTask {
        var request = request
        var edits = edits
        if let (rule, url) = self.rules.remoteTarget(request) {
            edits.append(TaskEdit(.request, "map-remote rule \(rule): \(request.url) → \(url)"))
            request.url = url
            if let host = LoopbackHost.authority(ofURL: url),
                let index = request.headers.firstIndex(where: { $0.hasName("host") })
            {
                request.headers[index].value = host
            }
        }
        let local = self.rules.localAnswer(request)
        if let local {
            edits.append(
                TaskEdit(
                    .response, "map-local rule \(local.rule): \(local.file ?? "refused: the path leaves its directory")"
                ))
        }
        let options =
            request.isIntercepted
            ? self.trust.interceptedOptions(host: request.host) : .proxy
        let task = self.gate.admit(request.kind, HoldFacts(request), holdable: local == nil) { id, heldBy in
            HTTPTask(
                id: id, request: request, client: client, context: self.taskContext, heldBy: heldBy, options: options,
                edits: edits, answersLocally: local != nil)
        }
        task.begin()
        if let local { self.answer(task, from: local) }
        return task
    }

    /// Registers a tunnel to `request.authority`, publishes `created` and starts connecting
    /// upstream on `eventLoop`, the client connection's loop, where the relay will run too; when
    /// a hold rule catches it, publishes `held` and connects nothing until it is released.
    package func startStream(_ request: StreamRequest, on eventLoop: any EventLoop) -> StreamTask {
        let upgrade = request.upgrade.map { upgrade in
            TunnelUpgrade(head: upgrade.head, tls: upgrade.tls ? self.tunnelTLS(host: request.host) : nil)
        }
        // A WebSocket a record rule names has its messages read as they pass; one atomic load
        // when no rule is in force.
        let plan = request.upgrade.flatMap { self.rules.recordPlan(host: request.host, url: $0.url) }
        let task = self.gate.admit(.stream, HoldFacts(request)) { id, heldBy in
            var upgrade = upgrade
            if let plan, upgrade != nil {
                let recorder = WebSocketRecorder(
                    rule: plan.rule, limit: plan.limit, sent: plan.request, received: plan.response)
                self.messageBook.add(recorder, task: id)
                upgrade?.recorder = recorder
            }
            return StreamTask(
                id: id, request: request, eventLoop: eventLoop, context: self.taskContext, heldBy: heldBy,
                upgrade: upgrade)
        }
        task.begin()
        return task
    }

    /// How a `wss://` upgrade's tunnel verifies `host`: as an intercepted request to it would.
    private func tunnelTLS(host: String) -> TunnelTLS {
        let options = self.trust.interceptedOptions(host: host)
        let pins = options.pins?.split(separator: ";").map(String.init) ?? []
        return TunnelTLS(
            host: host, caFile: options.caFile, pins: pins, pinsStandalone: options.pinsStandalone,
            maker: self.taskContext.tunnelTLS)
    }

    /// Called by a task once it ended, once (its `TaskContext.completed`): on the session thread
    /// for an HTTP task, on the client's event loop for a tunnel, on its lane for a download.
    static func complete(
        _ task: any ManagedTask, registry: TaskRegistry, events: EventBus, throttler: Throttler
    ) {
        let record = task.record()
        throttler.forget(task: task.id)
        registry.complete(task, record: record)
        events.publish(.completed, record)
        Self.recordProcessLater(of: task, in: record, registry: registry)
    }

    // MARK: queries

    /// The WebSocket messages a record rule kept of task `id`, live or completed; nil when none
    /// did (no rule named it, not a WebSocket, or let go from `WebSocketMessageBook`).
    package func messages(id: Int) -> WebSocketMessageLog? {
        self.messageBook.messages(task: id)
    }

    package func task(id: Int) -> TaskRecord? {
        let (live, recorded) = self.registry.find(id: id)
        return live?.record() ?? recorded.map(self.withBodiesAsKept)
    }

    /// Live tasks by id; with `includeHistory`, the completed records first, oldest first.
    package func tasks(includeHistory: Bool) -> [TaskRecord] {
        let (live, history) = self.registry.snapshot(includeHistory: includeHistory)
        return history.map(self.withBodiesAsKept) + live.sorted { $0.id < $1.id }.map { $0.record() }
    }

    /// A completed task's record, its bodies as they are now (its record was made when it ended):
    /// one removed since, to keep `record-max-total`, shows as cut by `total`; one whose writes,
    /// still waiting then, failed since shows as cut by `disk` at what its file holds.
    private func withBodiesAsKept(_ record: TaskRecord) -> TaskRecord {
        guard let bodies = record.bodies, let store = self.bodies else { return record }
        var record = record
        for side in BodySide.allCases {
            guard var body = bodies[side], let change = store.change(task: record.id, side: side) else { continue }
            switch change {
            case .removed: (body.size, body.cutBy) = (0, "total")
            case .failed(let size): (body.size, body.cutBy) = (size, body.cutBy ?? "disk")
            }
            body.cut = true
            if side == .request { record.bodies?.request = body } else { record.bodies?.response = body }
        }
        return record
    }

    /// The daemon's last step, once every service stopped: the tasks still live (parked
    /// downloads, their journal written) leave the registry, so that the references between the
    /// registry, its tasks and the download service do not outlive the daemon; LeakSanitizer
    /// reports them at exit otherwise. Released outside the lock.
    package func releaseLiveTasks() {
        let released = self.registry.removeAll()
        let waiting = self.downloads.scheduler.forgetWaiting()
        withExtendedLifetime((released, waiting)) {}
    }

    package var liveCount: Int { self.registry.liveCount }

    package func stats() -> SessionStats {
        let (live, totals) = self.registry.totals()
        var stats = SessionStats()
        for task in live {
            stats.byState[task.state.rawValue, default: 0] += 1
            stats.byKind[task.kind.rawValue, default: 0] += 1
            stats.bytesUp += task.bytesUp
            stats.bytesDown += task.bytesDown
        }
        stats.live = live.count
        stats.served = totals.served
        stats.failed = totals.failed
        stats.canceled = totals.canceled
        stats.bytesUp += totals.bytesUp
        stats.bytesDown += totals.bytesDown
        stats.history = totals.history
        stats.uptimeSeconds = Double((ContinuousClock.now - self.startedAt).components.seconds)
        stats.stateFiles = self.stateFileProblems()
        return stats
    }

    // MARK: verbs

    package func suspend(id: Int) throws(ManagerError) -> TaskRecord {
        try self.apply(.suspend, to: id)
    }

    package func resume(id: Int) throws(ManagerError) -> TaskRecord {
        try self.apply(.resume, to: id)
    }

    package func cancel(id: Int) throws(ManagerError) -> TaskRecord {
        try self.apply(.cancel, to: id)
    }

    /// Cancels with `failure` as the task's error rather than a person's `canceled`.
    package func cancel(id: Int, because failure: TaskFailure) throws(ManagerError) -> TaskRecord {
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
    ) throws(ManagerError) -> TaskRecord {
        let (live, recorded) = self.registry.find(id: id)
        guard let task = live else {
            if let recorded {
                throw .illegal(IllegalTransition(verb: verb.rawValue, state: recorded.state), task: id)
            }
            throw .unknownTask(id)
        }
        do {
            // The task publishes `suspended` or `resumed` itself, on a real change.
            switch verb {
            case .suspend: try task.suspend()
            case .resume: try task.resume()
            case .cancel: try task.cancel(failure)
            }
        } catch {
            throw .illegal(error, task: id)
        }
        return task.record()
    }

    private func applyAll(_ verb: TaskVerb) -> [TaskRecord] {
        let live = self.registry.liveTasks.sorted { $0.id < $1.id }
        return live.compactMap { task in
            try? self.apply(verb, to: task.id)
        }
    }
}

import AFProxyModel
import AFProxyRules
import AFProxyStore
import AFProxyTransport
import FoundationEssentials
import Logging
import NIOCore

/// Download tasks as a service beside the session manager, as NSURLSession's download tasks are
/// beside its data tasks: the validation of a request to download, the naming of its file, the
/// journal that carries the tasks across restarts, their parking at a stop, and the pin probe a
/// person uses to pin a host. It registers its tasks in the manager's registry (they are tasks
/// like any other for the verbs, the events and the history) and gives each the manager's
/// `TaskContext`; what the tasks share lives here too: settings, slots (`DownloadScheduler`),
/// the journal, the paths being made.
package final class DownloadService: Sendable {
    let settings: DownloadSettings
    let scheduler: DownloadScheduler
    let journal: DownloadJournal?
    private let paths = Locked<Set<String>>([])
    private let parked = Locked(false)
    private let registry: TaskRegistry
    /// How a new download comes to be, as every task: a hold rule may catch it (it is then made
    /// suspended), then it is registered and `created` published.
    private let gate: TaskGate
    private let context: TaskContext
    /// What its attempts' TLS connections trust: the CA bundle in force and the pins per host.
    private let trust: TransferTrust
    /// Whether a download started now must wait for the network (the manager's reachability).
    private let networkIsDown: @Sendable () -> Bool
    /// For what a person should hear about beside the task log (an insecure download).
    private let logger: Logger?
    /// The service's live tasks, by id, for what concerns downloads only (the network, parking)
    /// without sorting them out of the registry. Weak: the registry keeps them alive, and a
    /// parked task the daemon lets go at its end (`SessionManager.releaseLiveTasks`) is gone.
    private let tasks = Locked<[Int: WeakDownload]>([:])
    /// Where retry timers run (the daemon's event loops); nil only in tests whose downloads
    /// never wait for a retry.
    private let timers: (any EventLoopGroup)?

    private struct WeakDownload {
        weak var task: DownloadTask?
    }

    init(
        settings: DownloadSettings, registry: TaskRegistry, gate: TaskGate, context: TaskContext,
        trust: TransferTrust, networkIsDown: @escaping @Sendable () -> Bool, logger: Logger?,
        timers: (any EventLoopGroup)? = nil
    ) {
        self.timers = timers
        self.settings = settings
        self.scheduler = DownloadScheduler(limit: settings.maxActive)
        self.journal = settings.stateDirectory.map { DownloadJournal(directory: $0, logger: logger) }
        self.registry = registry
        self.gate = gate
        self.context = context
        self.trust = trust
        self.networkIsDown = networkIsDown
        self.logger = logger
    }

    /// Registers a download task for `spec`, publishes `created` and queues it; the answer is its
    /// record. Refused before any task exists when it cannot succeed as asked: a URL that is not
    /// http(s), a file the daemon cannot make there, an existing file without `force`, a path
    /// another download is making.
    package func start(_ spec: DownloadSpec) throws(ManagerError) -> TaskRecord {
        let settings = self.settings
        guard let name = DownloadURL.fileName(of: spec.url) else {
            throw .invalid(
                "only http:// and https:// URLs with a host can be downloaded: \(spec.url.prefix(200))")
        }
        if let sha256 = spec.sha256, sha256.utf8.count != 64 || !sha256.allSatisfy(\.isHexDigit) {
            throw .invalid("sha256 must be 64 hexadecimal digits")
        }
        if let pins = spec.pins {
            do throws(PinError) {
                for pin in pins { _ = try PinSet.parse(pin) }
            } catch {
                throw .invalid(error.message)
            }
        }
        let namedByAnswer = spec.path == nil && name == nil
        let path: String
        if let given = spec.path {
            path = given
        } else {
            path = try self.provisionalPath(name, in: settings.downloadDirectory)
        }
        if let refusal = DownloadTarget.refusal(for: path, force: spec.force, writableHint: settings.writableHint) {
            if spec.path == nil { self.finished(path: path) }
            throw refusal.hasSuffix("(--force replaces it)") ? .pathTaken(refusal) : .invalid(refusal)
        }
        guard spec.path == nil || self.claim(path) else {
            throw .pathTaken("another download is already making \(path)")
        }
        // A partial file left by an earlier download of this path is of unknown origin: the
        // task empties it on its lane (a large one takes the disk a while); one it could not
        // open is refused now.
        if let error = PartialFile.unusable(path + ".afpart") {
            self.finished(path: path)
            throw .invalid(error.description)
        }
        var spec = spec
        spec.sha256 = spec.sha256?.lowercased()
        // A download a hold rule catches is created suspended, as a restored suspended one is.
        var held = false
        let task = self.gate.admit(.download, HoldFacts(download: spec.url)) { id, heldBy in
            held = heldBy != nil
            return DownloadTask(
                id: id, spec: spec, path: path, namedByAnswer: namedByAnswer, createdAt: Date(),
                machine: DownloadStateMachine(policy: settings.policy, keepPartial: spec.keepPartial, heldBy: heldBy),
                context: self.context, downloads: self, discardsPartial: true)
        }
        self.tasks.withLock { $0[task.id] = WeakDownload(task: task) }
        self.journal?.update(task.entry())
        if spec.insecure {
            self.logger?.warning(
                "task \(task.id): download of \(spec.url) with TLS verification off (--insecure), asked by \(spec.client)"
            )
        }
        if held { self.context.events.publish(.held, task.record()) }
        if self.networkIsDown() && !task.isLoopback { task.networkLost() }
        task.start()
        return task.record()
    }

    /// Brings back the downloads of the journal a previous run left: unfinished ones as live
    /// tasks with their ids (a running one continues at its partial file's length, a suspended
    /// one stays suspended), finished ones into the history. New ids continue after the highest.
    /// Answers how many were restored live.
    package func restore() throws(FileError) -> Int {
        guard let journal = self.journal else { return 0 }
        let entries = try journal.load()
        let settings = self.settings
        var restored: [DownloadTask] = []
        var finished: [TaskRecord] = []
        for entry in entries {
            guard entry.state != .completed else {
                finished.append(entry.record(maxAttempts: settings.retries))
                continue
            }
            let partialPath = entry.partialPath ?? entry.path + ".afpart"
            let offset = PartialFile.length(of: partialPath) ?? 0
            let machine = DownloadStateMachine(
                policy: settings.policy, keepPartial: entry.keepPartial, state: entry.state, offset: offset,
                total: entry.total, validator: entry.validator, failuresInARow: entry.failuresInARow,
                resumes: entry.resumes, restarts: entry.restarts,
                heldBy: entry.state == .suspended ? entry.heldBy : nil)
            let spec = DownloadSpec(
                url: entry.url, headers: entry.headers, path: entry.path, sha256: entry.sha256,
                keepPartial: entry.keepPartial, pins: entry.pins, insecure: entry.insecure ?? false,
                client: "restored")
            let task = DownloadTask(
                id: entry.id, spec: spec, path: entry.path, partialPath: partialPath,
                namedByAnswer: entry.namedByAnswer ?? false, createdAt: entry.createdAt, machine: machine,
                context: self.context, downloads: self)
            _ = self.claim(entry.path)
            restored.append(task)
            self.tasks.withLock { $0[task.id] = WeakDownload(task: task) }
        }
        self.registry.restore(live: restored, finished: finished)
        for task in restored {
            if self.networkIsDown() && !task.isLoopback { task.networkLost() }
            task.start()
        }
        return restored.count
    }

    /// The `sha256//…` pin of the key `host:port` presents now, verified with the policy in
    /// force. Blocks for the handshake: call it off any event loop.
    package func probePin(host: String, port: Int) -> Result<String, TaskFailure> {
        self.context.transport.probePin(host: host, port: port, caFile: self.trust.caFile)
    }

    /// The daemon stops: download tasks are not canceled but kept as they are in the journal,
    /// written to disk before this returns, to continue at the next start.
    package func park() {
        self.parked.withLock { $0 = true }
        guard let journal = self.journal else { return }
        for task in self.liveTasks() { journal.update(task.entry()) }
        journal.flush()
    }

    /// The network went away (`SessionManager.networkChanged`): every download to another
    /// machine waits for it without spending retries.
    func networkLost() {
        for task in self.liveTasks() where !task.isLoopback { task.networkLost() }
    }

    /// The network came back: the downloads waiting for it continue.
    func networkRestored() {
        for task in self.liveTasks() where !task.isLoopback { task.networkRestored() }
    }

    /// The live download tasks, oldest first.
    private func liveTasks() -> [DownloadTask] {
        self.tasks.withLock { $0.values.compactMap(\.task) }.sorted { $0.id < $1.id }
    }

    /// Runs `work` after `delay` on one of the daemon's event loops (a retry's wait: nothing
    /// sleeps); the answer cancels it. Nil, and `work` never runs, without event loops (tests).
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Scheduled<Void>? {
        self.timers?.next().scheduleTask(in: TimeAmount(delay), work)
    }

    /// What a download's next attempt to `url` connects with: the policy in force, the
    /// download's own pins in place of its host's pin rules, and its `insecure`.
    func transferOptions(for spec: DownloadSpec) -> TransferOptions {
        self.trust.options(for: spec)
    }

    /// Claims `path` for a download; false when another live download makes it.
    func claim(_ path: String) -> Bool {
        self.paths.withLock { $0.insert(path).inserted }
    }

    /// Moves a claim from `old` to `new`; false (and `old` kept) when `new` is taken.
    func move(_ old: String, to new: String) -> Bool {
        self.paths.withLock { paths in
            guard paths.insert(new).inserted else { return false }
            paths.remove(old)
            return true
        }
    }

    func finished(_ task: DownloadTask) {
        self.tasks.withLock { _ = $0.removeValue(forKey: task.id) }
        self.finished(path: task.path)
        self.journal?.update(task.entry())
    }

    /// The daemon stops (`park()`): from then on the tasks act on nothing and write nothing, so
    /// that the journal keeps them as they were (running stays running) for the next start.
    var isParked: Bool { self.parked.withLock { $0 } }

    func finished(path: String) {
        _ = self.paths.withLock { $0.remove(path) }
    }

    /// The path of a download not given one: the URL's file name in the download directory
    /// (claimed here), or, for a URL that names none, `download`, `download-2`, … (the first
    /// free one) until the answer names it. The directory is made if it is missing.
    private func provisionalPath(
        _ name: String?, in directory: String
    ) throws(ManagerError)
        -> String
    {
        do throws(FileError) {
            try Files.makeDirectory(directory)
        } catch {
            throw .invalid(error.description)
        }
        if let name {
            let path = directory + "/" + name
            guard self.claim(path) else {
                throw .pathTaken("another download is already making \(path)")
            }
            return path
        }
        for index in 1...1000 {
            let path = directory + (index == 1 ? "/download" : "/download-\(index)")
            guard PartialFile.length(of: path) == nil, PartialFile.length(of: path + ".afpart") == nil,
                self.claim(path)
            else { continue }
            return path
        }
        throw .pathTaken("no free name for a download in \(directory)")
    }
}

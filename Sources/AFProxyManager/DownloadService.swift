import AFProxyCurl
import AFProxyModel
import AFProxyRules
import AFProxyStore
import FoundationEssentials
import Logging
import NIOCore

/// Download tasks as a service beside the session manager, as NSURLSession's download tasks are
/// beside its data tasks: the validation of a request to download, the naming of its file, the
/// journal that carries the tasks across restarts, their parking at a stop, and the pin probe a
/// person uses to pin a host. It registers its tasks in the manager's registry (they are tasks
/// like any other for the verbs, the events and the history) and gives each the manager's
/// `TaskContext`; what the tasks share lives here too: settings, slots (`DownloadScheduler`),
/// the journal, the paths being made, the security policy in force.
package final class DownloadService: Sendable {
    let settings: DownloadSettings
    let scheduler: DownloadScheduler
    let journal: DownloadJournal?
    private let paths = Locked<Set<String>>([])
    /// The security policy in force, replaced on reload.
    let security: Locked<SecurityPolicy>
    private let parked = Locked(false)
    private let registry: Locked<SessionManager.Registry>
    private let context: TaskContext
    /// The hold rules: a download one of them catches is created suspended.
    private let holds: HoldBook
    /// The pins per host (`pin`), asked by each new TLS connection.
    private let pins: LiveRules<PinSet>
    private let network: Locked<SessionManager.NetworkState>
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
        settings: DownloadSettings, registry: Locked<SessionManager.Registry>, context: TaskContext,
        holds: HoldBook, pins: LiveRules<PinSet>, network: Locked<SessionManager.NetworkState>, logger: Logger?,
        timers: (any EventLoopGroup)? = nil
    ) {
        self.timers = timers
        self.settings = settings
        self.scheduler = DownloadScheduler(limit: settings.maxActive)
        self.journal = settings.stateDirectory.map { DownloadJournal(directory: $0, logger: logger) }
        self.security = Locked(settings.security)
        self.registry = registry
        self.context = context
        self.holds = holds
        self.pins = pins
        self.network = network
        self.logger = logger
    }

    /// Registers a download task for `spec`, publishes `created` and queues it; the answer is its
    /// record. Refused before any task exists when it cannot succeed as asked: a URL that is not
    /// http(s), a file the daemon cannot make there, an existing file without `force`, a path
    /// another download is making.
    package func start(_ spec: DownloadSpec) throws(DownloadRefusal) -> TaskRecord {
        let settings = self.settings
        guard let name = DownloadURL.fileName(of: spec.url) else {
            throw DownloadRefusal(
                400, "only http:// and https:// URLs with a host can be downloaded: \(spec.url.prefix(200))")
        }
        if let sha256 = spec.sha256, sha256.utf8.count != 64 || !sha256.allSatisfy(\.isHexDigit) {
            throw DownloadRefusal(400, "sha256 must be 64 hexadecimal digits")
        }
        if let pins = spec.pins {
            do throws(PinError) {
                for pin in pins { _ = try PinSet.parse(pin) }
            } catch {
                throw DownloadRefusal(400, error.message)
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
            throw DownloadRefusal(refusal.hasSuffix("(--force replaces it)") ? 409 : 400, refusal)
        }
        guard spec.path == nil || self.claim(path) else {
            throw DownloadRefusal(409, "another download is already making \(path)")
        }
        // A partial file left by an earlier download of this path is of unknown origin: the
        // task empties it on its lane (a large one takes the disk a while); one it could not
        // open is refused now.
        if let error = PartialFile.unusable(path + ".afpart") {
            self.finished(path: path)
            throw DownloadRefusal(400, error.description)
        }
        var spec = spec
        spec.sha256 = spec.sha256?.lowercased()
        // A download a hold rule catches is created suspended, as a restored suspended one is.
        let heldBy = self.holds.catchTask(HoldFacts(download: spec.url))
        let task = self.registry.register(.download) { id in
            DownloadTask(
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
        self.context.events.publish(.created, task.record())
        if heldBy != nil { self.context.events.publish(.held, task.record()) }
        if self.networkIsDown && !task.isLoopback { task.networkLost() }
        task.start()
        return task.record()
    }

    /// Whether a download started now must wait for the network.
    private var networkIsDown: Bool { self.network.withLock { $0.holdsNewDownloads } }

    /// Brings back the downloads of the journal a previous run left: unfinished ones as live
    /// tasks with their ids (a running one continues at its partial file's length, a suspended
    /// one stays suspended), finished ones into the history. New ids continue after the highest.
    /// Answers how many were restored live.
    package func restore() throws(FileError) -> Int {
        guard let journal = self.journal else { return 0 }
        let entries = try journal.load()
        let settings = self.settings
        var restored: [DownloadTask] = []
        self.registry.withLock { registry in
            for entry in entries {
                registry.nextID = max(registry.nextID, entry.id + 1)
                guard entry.state != .completed else {
                    registry.history.append(entry.record(maxAttempts: settings.retries))
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
                registry.live[task.id] = task
                restored.append(task)
                self.tasks.withLock { $0[task.id] = WeakDownload(task: task) }
            }
        }
        for task in restored {
            if self.networkIsDown && !task.isLoopback { task.networkLost() }
            task.start()
        }
        return restored.count
    }

    /// The `sha256//…` pin of the key `host:port` presents now, verified with the policy in
    /// force. Blocks for the handshake: call it off any event loop.
    package func probePin(host: String, port: Int) -> Result<String, TaskFailure> {
        let caFile = self.security.withLock { $0.caFile }
        return self.context.transport.probePin(host: host, port: port, caFile: caFile)
    }

    /// A reload's security policy: new TLS connections of download tasks use it.
    package func updateSecurityPolicy(_ policy: SecurityPolicy) {
        self.security.withLock { $0 = policy }
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
        let policy = self.security.withLock { $0 }
        let host = LoopbackHost.host(ofURL: spec.url) ?? ""
        let hostPins = self.pins.ruleSet.policy(for: host)
        let pins = spec.pins.map { $0.joined(separator: ";") } ?? hostPins?.pins
        var options = TransferOptions.download(caFile: policy.caFile, pins: pins, insecure: spec.insecure)
        // A download's own pins (`--pin`) do not stand alone; its host's `standalone` line does.
        options.pinsStandalone = spec.pins == nil && (hostPins?.standalone ?? false)
        return options
    }

    /// What an intercepted request to `host` connects with: the policy in force and the host's pins.
    package func interceptedTransferOptions(host: String) -> TransferOptions {
        let policy = self.security.withLock { $0 }
        return .intercepted(caFile: policy.caFile, pins: self.pins.ruleSet.policy(for: host))
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
    ) throws(DownloadRefusal)
        -> String
    {
        do throws(FileError) {
            try Files.makeDirectory(directory)
        } catch {
            throw DownloadRefusal(400, error.description)
        }
        if let name {
            let path = directory + "/" + name
            guard self.claim(path) else {
                throw DownloadRefusal(409, "another download is already making \(path)")
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
        throw DownloadRefusal(409, "no free name for a download in \(directory)")
    }
}

import AFProxyCurl
import AFProxyModel
import AFProxyRules
import AFProxyStore
import Logging

/// What the download tasks share: their settings, the slots they take turns on, the journal that
/// carries them across restarts, and the paths they are making (two downloads never make one file).
final class DownloadCoordinator: Sendable {
    let settings: DownloadSettings
    let scheduler: DownloadScheduler
    let journal: DownloadJournal?
    private let paths = Locked<Set<String>>([])
    /// The security policy in force, replaced on reload.
    let security: Locked<SecurityPolicy>
    private let parked = Locked(false)

    init(settings: DownloadSettings, logger: Logger?) {
        self.settings = settings
        self.scheduler = DownloadScheduler(limit: settings.maxActive)
        self.journal = settings.stateDirectory.map { DownloadJournal(directory: $0, logger: logger) }
        self.security = Locked(settings.security)
    }

    /// What a download's next attempt to `url` connects with: the policy in force, the
    /// download's own pins in place of its host's, and its `insecure`.
    func transferOptions(for spec: DownloadSpec) -> TransferOptions {
        let policy = self.security.withLock { $0 }
        let host = LoopbackHost.host(ofURL: spec.url) ?? ""
        let pins = spec.pins.map { $0.joined(separator: ";") } ?? policy.pins.pins(for: host)
        return .download(caFile: policy.caFile, pins: pins, insecure: spec.insecure)
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
        self.finished(path: task.path)
        self.journal?.update(task.entry())
    }

    /// The daemon stops: from now on the tasks act on nothing and write nothing, so that the
    /// journal keeps them as they were (running stays running) for the next start.
    func park() {
        self.parked.withLock { $0 = true }
    }

    var isParked: Bool { self.parked.withLock { $0 } }

    func finished(path: String) {
        _ = self.paths.withLock { $0.remove(path) }
    }
}

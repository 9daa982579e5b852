import AFProxyManager
import AFProxyModel
import AFProxyNetwork
import Logging

/// Where the network watcher's reports go, in this order: the session manager first (what a loss
/// does to the tasks is its business, `networkChanged`), then the event stream
/// (`network-lost` / `network-restored`), then the log at notice level. Called on the watcher's
/// thread, one report at a time.
final class NetworkReporter: Sendable {
    let manager: SessionManager
    let logger: Logger
    private let last = Locked(Reachability.unknown)

    init(manager: SessionManager, logger: Logger) {
        self.manager = manager
        self.logger = logger
    }

    func report(_ reachability: Reachability) {
        let old = self.last.withLock { last in
            defer { last = reachability }
            return last
        }
        self.manager.networkChanged(reachability)
        if let kind = NetworkEvent.between(old.status, reachability.status) {
            self.manager.events.publishNetwork(kind, reachability)
        }
        if let message = Self.logMessage(from: old, to: reachability) {
            self.logger.notice("\(message)")
        }
    }

    /// `network unreachable`, `network reachable via eth0 (ethernet)`; nil when nothing a person
    /// would notice changed.
    static func logMessage(from old: Reachability, to new: Reachability) -> String? {
        switch new.status {
        case .unreachable where old.status != .unreachable:
            return "network unreachable"
        case .reachable where old.status != .reachable || old.interface != new.interface:
            let kind = new.interfaceKind.map { " (\($0))" } ?? ""
            return "network reachable via \(new.interface ?? "?")\(kind)"
        case .unknown where new.reason != nil:
            // The watcher's failure is logged once, with its error, where it happens (Daemon).
            return nil
        case .unknown where old.status != .unknown:
            return "network status unknown: no longer following the kernel's reports"
        default:
            return nil
        }
    }
}

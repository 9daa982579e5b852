import AFProxyModel
import AFProxyRules
import AFProxyStore
import Logging

/// Every rule kind in force in the daemon, one `LiveRules` each, and the questions the tasks ask
/// of them: how fast a task may go (`throttleTicket`, `limit`), whether a new task is held
/// (`holds.catchTask`), where a transfer may connect (`destinationPolicy`), who may use the proxy
/// (`access`, asked by the listener), which keys and which CA bundle the daemon's own TLS
/// connections to origins trust (`pins`, `security`: `TransferTrust`).
/// The configuration's rules of every kind arrive as one `ConfiguredRules`, at creation and on
/// each reload (`apply`); the kinds set at runtime keep their rules in the state directory, each
/// in its own `StateFile`, back at creation and listed once here (`stateFiles`) for the daemon's
/// stop and its status.
///
/// Adding a rule kind (say a "block" rule that refuses new tasks matching conditions, set through
/// the API and kept across restarts) takes these files, in four modules:
///
/// 1. `AFProxyRules/BlockRule.swift`: one rule, what it matches and what it does, and its JSON
///    (the API's and the state file's).
/// 2. `AFProxyRules/BlockRuleSet.swift`: the rules in force and the kind's question
///    (`refusal(for: HoldFacts)`), conforming to `RuleSet` (`stateFileName = "blocks.json"`,
///    `saved`, `restore`, `count`).
/// 3. `Tests/AFProxyRulesTests/BlockRuleSetTests.swift`: the matching, as a value.
/// 4. This file: `let blocks: LiveRules<BlockRuleSet>`, made with its file in `init` (which
///    restores it), and a line in `stateFiles`; the store, its lock, its fast path and its status
///    come with it.
/// 5. Where the question is asked: `TaskGate.admit` for every new task (a proxied request, a
///    tunnel, a download), as the hold rules are.
/// 6. `AFProxyControl/BlocksEndpoint.swift` and its line in `ControlRouter+API.swift`, the
///    request and list bodies in `AFProxyAPI/BlockMessages.swift`, and the rule's type in
///    `AFProxyAPI/WireTypes.swift` when afproxyctl reads it.
/// 7. `AFProxyCLI/BlockCommand.swift` and its line in `AFProxyCtl.swift`.
/// 8. `Tests/integration/test_blocks.py` and docs/rules.md (a key also in docs/configuration.md).
///
/// Thirteen files (eleven without the integration test and docs) where the hold rule took 29
/// in seven modules, and no store, lock, load path, reload line or encoder settings of its own.
/// A kind from the configuration only (`stateFileName = nil`, `NoSavedRules`, as destination,
/// access and pin rules are) skips the state file, the endpoint and the command: 1–3, then a
/// field of `AFProxyRules/ConfiguredRules.swift`, here its `let` and its line in
/// `setConfigured`, its configuration key in AFProxyDaemon (`DaemonConfiguration` and
/// `Daemon.configuredRules`), and where the question is asked; a reload reaches it with no
/// line of its own.
package final class RuleBook: Sendable {
    /// Throttle rules: the configuration's defaults, host and global rules set at runtime
    /// (`throttle.json`), task rules; and their buckets, which the transports consult per chunk.
    package let throttle: Throttler
    /// Hold rules (`holds.json`): a new task one of them catches is created suspended (`held`).
    package let holds: HoldBook
    /// Intercept rules: `intercept-hosts` and `intercept-exclude` from the configuration, hosts
    /// added at runtime and the hosts passed through after a refused certificate (`intercept.json`).
    package let intercept: LiveRules<InterceptRuleSet>
    /// `deny-hosts`, `allow-hosts`, `deny-private-destinations`, from the configuration.
    package let destinations = LiveRules(DestinationPolicy.open)
    /// `allow-clients` and `proxy-auth-file`, from the configuration, with the credentials
    /// verified already (`ProxyAuthenticator`); the listener asks them.
    package let access = LiveRules(AccessState())
    /// `pin`, from the configuration: the keys a download's TLS connection to a host may present.
    package let pins = LiveRules(PinSet())
    /// `tls-ca-file`, from the configuration: the CA bundle the daemon's own TLS connections to
    /// origins trust besides the system's (`TransferTrust` asks it with the pins).
    package let security = LiveRules(SecurityPolicy())
    /// `upstream-proxy` and `upstream-exclude`, from the configuration: the parent proxy new
    /// connections go through, and its health; the curl session and the tunnels share it.
    package let parentProxy = ParentProxy()
    /// The files of the kinds kept in the state directory.
    package let stateFiles: [any AnyStateFile]
    /// How many hold rules a previous run kept came back (0: none, or no file).
    package let restoredHolds: Int

    /// The configuration's rules are in force at once. The runtime rules are kept in
    /// `stateDirectory` (nil: not kept); those a previous run kept are back before the book is
    /// answered, so the first request meets them (throttle rules on top of the configuration's).
    package init(configured: ConfiguredRules = ConfiguredRules(), stateDirectory: String? = nil, logger: Logger? = nil)
    {
        let throttleFile = stateDirectory.flatMap {
            StateFiles.file(for: ThrottleRuleSet.self, directory: $0, logger: logger)
        }
        let holdsFile = stateDirectory.flatMap { StateFiles.file(for: HoldRuleSet.self, directory: $0, logger: logger) }
        self.throttle = Throttler(defaults: configured.throttleDefaults, store: throttleFile)
        let holds = HoldBook(HoldRuleSet(), store: holdsFile)
        self.holds = holds
        let restoredHolds = holds.restore()
        if restoredHolds > 0 { logger?.notice("restored \(restoredHolds) hold rule(s)") }
        self.restoredHolds = restoredHolds
        let interceptFile = stateDirectory.flatMap {
            StateFiles.file(for: InterceptRuleSet.self, directory: $0, logger: logger)
        }
        self.intercept = LiveRules(InterceptRuleSet(), store: interceptFile)
        self.intercept.restore()
        let files: [(any AnyStateFile)?] = [throttleFile, holdsFile, interceptFile]
        self.stateFiles = files.compactMap { $0 }
        self.setConfigured(configured)
    }

    /// A reload: the configuration's rules of every kind replace the previous ones; the rules
    /// set at runtime stay. Running tasks follow the throttle at once, new transfers and
    /// tunnels the destinations, new connections `allow-clients`, every request the users, new
    /// TLS connections the pins and the CA bundle, new upstream connections the parent proxy.
    package func apply(_ configured: ConfiguredRules) {
        self.throttle.replaceDefaults(configured.throttleDefaults)
        self.setConfigured(configured)
    }

    private func setConfigured(_ configured: ConfiguredRules) {
        self.destinations.change { $0 = configured.destinations }
        self.access.change { $0 = configured.access }
        self.pins.change { $0 = configured.pins }
        self.security.change { $0 = configured.security }
        self.parentProxy.update(configured.upstream)
        self.intercept.change { $0.configure(from: configured.intercept) }
    }

    /// What a task's transport consults to throttle its bytes.
    package func throttleTicket(task: Int, host: String) -> ThrottleTicket {
        ThrottleTicket(throttler: self.throttle, task: task, host: host)
    }

    /// The rules each new transfer and tunnel is checked against.
    package var destinationPolicy: DestinationPolicy { self.destinations.ruleSet }
}

import AFProxyModel
import AFProxyRules
import AFProxyStore
import Logging

/// Every rule kind in force in the daemon, one `LiveRules` each, and the questions the tasks ask
/// of them: how fast a task may go (`throttleTicket`, `limit`), whether a new task is held
/// (`holds.catchTask`), where a transfer may connect (`destinationPolicy`). The kinds set at
/// runtime keep their rules in the state directory, each in its own `StateFile`, listed once
/// here (`stateFiles`) for the daemon's stop and its status.
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
/// 4. This file: `let blocks: LiveRules<BlockRuleSet>`, made with its file in `init`, and a
///    line in `stateFiles`; the store, its lock, its fast path and its status come with it.
/// 5. Where the question is asked: `SessionManager.startTask`/`startStream` for new tasks.
/// 6. `AFProxyControl/BlocksEndpoint.swift` and its line in `ControlRouter+API.swift`.
/// 7. `AFProxyCLI/BlockCommand.swift` and its line in `AFProxyCtl.swift`.
/// 8. `Tests/integration/test_blocks.py` and README.
///
/// Eleven files (nine without the integration test and README) where the hold rule took 29 in
/// seven modules, and no store, lock, load path or encoder settings of its own. A kind from the
/// configuration only (`stateFileName = nil`) skips the endpoint and the command, and takes its
/// configuration key in AFProxyDaemon instead.
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
    /// The files of the kinds kept in the state directory.
    package let stateFiles: [any AnyStateFile]

    /// The runtime rules are kept in `stateDirectory` (nil: not kept); throttle rules kept by a
    /// previous run are in force at once, on top of `throttleDefaults`. Hold rules come back
    /// when the daemon asks (`holds.restore()`), before the first request is read.
    package init(throttleDefaults: [ThrottleRule] = [], stateDirectory: String? = nil, logger: Logger? = nil) {
        let throttleFile = stateDirectory.flatMap {
            StateFiles.file(for: ThrottleRuleSet.self, directory: $0, logger: logger)
        }
        let holdsFile = stateDirectory.flatMap { StateFiles.file(for: HoldRuleSet.self, directory: $0, logger: logger) }
        self.throttle = Throttler(defaults: throttleDefaults, store: throttleFile)
        self.holds = HoldBook(HoldRuleSet(), store: holdsFile)
        let interceptFile = stateDirectory.flatMap {
            StateFiles.file(for: InterceptRuleSet.self, directory: $0, logger: logger)
        }
        self.intercept = LiveRules(InterceptRuleSet(), store: interceptFile)
        self.intercept.restore()
        let files: [(any AnyStateFile)?] = [throttleFile, holdsFile, interceptFile]
        self.stateFiles = files.compactMap { $0 }
    }

    /// What a task's transport consults to throttle its bytes.
    package func throttleTicket(task: Int, host: String) -> ThrottleTicket {
        ThrottleTicket(throttler: self.throttle, task: task, host: host)
    }

    /// The rules each new transfer and tunnel is checked against.
    package var destinationPolicy: DestinationPolicy { self.destinations.ruleSet }
}

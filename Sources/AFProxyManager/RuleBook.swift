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
/// Adding a rule kind a person edits at runtime (say a "block" rule that refuses new tasks
/// matching conditions, set through the API and kept across restarts) takes six files:
///
/// 1. `AFProxyRules/BlockRuleSet.swift`: the rules in force and the kind's question
///    (`refusal(for: HoldFacts)`), conforming to `EditableRuleSet` (`kind = "blocks"`,
///    `ruleName`, `requestFields`, `add`, `remove`, `rules`) and so to `RuleSet`
///    (`stateFileName = "blocks.json"`, `saved`, `restore`, `count`); beside it its rule
///    (`Codable`, `Identifiable` by an `Int`) and the body `POST` takes (`Decodable`). Three small
///    types in one file, the one place the house's one type a file gives way; a rule that grows
///    conditions of its own (`HoldRule` has `HoldConditions`, `HoldURLPattern`) takes them to
///    files of their own, as many more.
/// 2. `Tests/AFProxyRulesTests/BlockRuleSetTests.swift`: the matching and the refusals, as values.
/// 3. This file: `let blocks: LiveRules<BlockRuleSet>`, made in `init` with
///    `Self.editable(BlockRuleSet(), in: stateDirectory, logger: logger)` (which restores it) and
///    put in `editable`. From that list alone come `GET/POST /v1/rules/blocks`,
///    `DELETE /v1/rules/blocks/{id}` (`RulesEndpoint`), `afproxyctl rules blocks` (which reads the
///    JSON, so the wire API gains no type), its state file in `stateFiles` (the daemon's stop,
///    `afproxyctl status`), and the store, lock and fast path of `LiveRules`.
/// 4. Where the question is asked: `TaskGate.admit` for every new task (a proxied request, a
///    tunnel, a download), as the hold rules are; it has the rule book. (Holds only change how
///    a task starts; a refusal is a new answer, which the three paths that make tasks would have
///    to give, and that is the kind's own work, not the edge's.)
/// 5. `Tests/integration/test_blocks.py`, through `afproxyctl rules blocks` and `/v1/rules/blocks`.
/// 6. `docs/rules.md`: what a block rule does and its fields (docs/control-api.md and
///    docs/afproxyctl.md describe `/v1/rules` and `afproxyctl rules` for every kind).
///
/// Throttle and intercept rules are set at runtime too but keep their own endpoints and commands:
/// a throttle rule is named by its scope and changed in place, an intercept rule by its pattern,
/// beside the configuration's rules and the pass-throughs; neither has ids to add and remove by.
/// A kind from the configuration only (`stateFileName = nil`, `NoSavedRules`, as destination,
/// access and pin rules are) skips `EditableRuleSet` and the state file: 1–2, then a field of
/// `AFProxyRules/ConfiguredRules.swift`, here its `let` and its line in `setConfigured`, its
/// configuration key in AFProxyDaemon (`DaemonConfiguration` and `Daemon.configuredRules`), and
/// where the question is asked; a reload reaches it with no line of its own.
package final class RuleBook: Sendable {
    /// Throttle rules: the configuration's defaults, host and global rules set at runtime
    /// (`throttle.json`), task rules; and their buckets, which the transports consult per chunk.
    package let throttle: Throttler
    /// Hold rules (`holds.json`): a new task one of them catches is created suspended (`held`).
    package let holds: HoldBook
    /// Record rules (`records.json`): a new task one of them names keeps its bodies (`BodyStore`).
    package let records: LiveRules<RecordRuleSet>
    /// Map-remote rules (`map-remote.json`): a new request one of them names goes to another origin.
    package let mapRemote: LiveRules<MapRemoteRuleSet>
    /// Map-local rules (`map-local.json`): a new request one of them names is answered from a file.
    package let mapLocal: LiveRules<MapLocalRuleSet>
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
    /// `upstream-proxy` and `upstream-exclude`, from the configuration: the upstream proxy new
    /// connections go through, and its health; the curl session and the tunnels share it.
    package let liveUpstreamProxy = LiveUpstreamProxy()
    /// The kinds a person edits at runtime, in the order `GET /v1/rules` lists them: the control
    /// API's `/v1/rules/{kind}` and `afproxyctl rules` serve each, and their files are among
    /// `stateFiles`, from this list alone.
    package let editable: [any EditableRules]
    /// The files of the kinds kept in the state directory.
    package let stateFiles: [any AnyStateFile]

    /// The configuration's rules are in force at once. The runtime rules are kept in
    /// `stateDirectory` (nil: not kept); those a previous run kept are back before the book is
    /// answered, so the first request meets them (throttle rules on top of the configuration's).
    package init(configured: ConfiguredRules = ConfiguredRules(), stateDirectory: String? = nil, logger: Logger? = nil)
    {
        let throttleFile = stateDirectory.flatMap {
            StateFiles.file(for: ThrottleRuleSet.self, directory: $0, logger: logger)
        }
        self.throttle = Throttler(defaults: configured.throttleDefaults, store: throttleFile)
        let holds = Self.editable(HoldRuleSet(), in: stateDirectory, logger: logger)
        self.holds = holds
        let records = Self.editable(RecordRuleSet(), in: stateDirectory, logger: logger)
        self.records = records
        let mapRemote = Self.editable(MapRemoteRuleSet(), in: stateDirectory, logger: logger)
        self.mapRemote = mapRemote
        let mapLocal = Self.editable(MapLocalRuleSet(), in: stateDirectory, logger: logger)
        self.mapLocal = mapLocal
        let editable: [any EditableRules] = [holds, records, mapRemote, mapLocal]
        self.editable = editable
        let interceptFile = stateDirectory.flatMap {
            StateFiles.file(for: InterceptRuleSet.self, directory: $0, logger: logger)
        }
        self.intercept = LiveRules(InterceptRuleSet(), store: interceptFile)
        self.intercept.restore()
        let files: [(any AnyStateFile)?] = [throttleFile, interceptFile] + editable.map(\.stateFile)
        self.stateFiles = files.compactMap { $0 }
        self.setConfigured(configured)
    }

    /// An editable kind made live: its file in `directory`, and what a previous run kept in it
    /// back (and said in the log).
    private static func editable<Kind: EditableRuleSet>(
        _ rules: Kind, in directory: String?, logger: Logger?
    ) -> LiveRules<Kind> {
        let file = directory.flatMap { StateFiles.file(for: Kind.self, directory: $0, logger: logger) }
        let live = LiveRules(rules, store: file)
        let restored = live.restore()
        if restored > 0 { logger?.notice("restored \(restored) \(Kind.ruleName)(s)") }
        return live
    }

    /// A reload: the configuration's rules of every kind replace the previous ones; the rules
    /// set at runtime stay. Running tasks follow the throttle at once, new transfers and
    /// tunnels the destinations, new connections `allow-clients`, every request the users, new
    /// TLS connections the pins and the CA bundle, new upstream connections the upstream proxy.
    package func apply(_ configured: ConfiguredRules) {
        self.throttle.replaceDefaults(configured.throttleDefaults)
        self.setConfigured(configured)
    }

    private func setConfigured(_ configured: ConfiguredRules) {
        self.destinations.change { $0 = configured.destinations }
        self.access.change { $0 = configured.access }
        self.pins.change { $0 = configured.pins }
        self.security.change { $0 = configured.security }
        self.liveUpstreamProxy.update(configured.upstream)
        self.intercept.change { $0.configure(from: configured.intercept) }
    }

    /// What a task's transport consults to throttle its bytes.
    package func throttleTicket(task: Int, host: String) -> ThrottleTicket {
        ThrottleTicket(throttler: self.throttle, task: task, host: host)
    }

    /// What the record rules keep of `request`'s bodies; one atomic load when there is no rule.
    package func recordPlan(_ request: ProxyRequest) -> RecordPlan? {
        self.recordPlan(host: request.host, url: request.url)
    }

    /// The same for any absolute URL (a WebSocket task's `ws://…`).
    package func recordPlan(host: String, url: String) -> RecordPlan? {
        guard self.records.isActive else { return nil }
        return self.records.ruleSet.plan(host: host, url: url)
    }

    /// Where a map-remote rule sends `request`, and which rule; one atomic load when there is none.
    package func remoteTarget(_ request: ProxyRequest) -> (rule: Int, url: String)? {
        guard self.mapRemote.isActive else { return nil }
        return self.mapRemote.ruleSet.target(host: request.host, url: request.url)
    }

    /// The file a map-local rule answers `request` with; one atomic load when there is no rule.
    package func localAnswer(_ request: ProxyRequest) -> MapLocalPlan? {
        guard self.mapLocal.isActive else { return nil }
        return self.mapLocal.ruleSet.answer(host: request.host, url: request.url)
    }

    /// The rules each new transfer and tunnel is checked against.
    package var destinationPolicy: DestinationPolicy { self.destinations.ruleSet }
}

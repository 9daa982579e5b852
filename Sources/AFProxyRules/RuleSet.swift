/// The one shape of a rule kind: a plain value that holds every rule of the kind in force and
/// answers the kind's question about a task, with no lock and no I/O, so it is tested as a value.
/// Each rule in it has the same four parts, whatever the kind:
///
/// | kind | matches | does | scope | persists |
/// |---|---|---|---|---|
/// | throttle (`ThrottleRuleSet`) | a task id, a `HostPattern`, or everything | limits bytes/s down and up | task, host, global | runtime host and global rules, in `throttle.json` |
/// | hold (`HoldRuleSet`) | `HoldConditions` (host, method, URL regex, kind) | holds a new task suspended | new tasks | all, in `holds.json` |
/// | destination (`DestinationPolicy`) | a `HostPattern`, private addresses | denies or allows the upstream | every transfer and tunnel | no: configuration |
/// | pin (`PinSet`) | a `HostPattern` | trusts only the pinned keys | the daemon's own TLS | no: configuration |
/// | access (`AccessRules`: `AllowedClients`, `ProxyUsers`) | a client address, a user | lets the client in or answers 403/407 | client connections | no: configuration |
///
/// Rules from the configuration file are replaced on reload; rules set through the control API
/// (`Saved`) are kept in the kind's state file and come back on start (`restore`). A kind is live
/// in the daemon as one `LiveRules` of the rule book, which takes its lock, keeps its
/// "anything in force" flag and hands `saved` to its file after each change.
/// A kind whose rules a person adds and removes by id at runtime conforms to `EditableRuleSet`
/// as well, and the API and afproxyctl serve it with no code of its own.
package protocol RuleSet: RuleState where Rules == Self {
    /// What the kind keeps across restarts: its runtime rules (`NoSavedRules` for a kind that
    /// comes from the configuration only).
    associatedtype Saved: Codable & Sendable & Equatable
    /// The kind's file in the state directory; nil: nothing of it is kept.
    static var stateFileName: String? { get }
    /// The runtime rules, as the state file holds them.
    var saved: Saved { get }
    /// Puts back what a previous run kept, over the rules the configuration gives.
    mutating func restore(_ saved: Saved)
    /// How many rules are in force.
    var count: Int { get }
}

/// A kind of runtime rules only (no configured ones beside them) keeps itself whole: its saved
/// form is the set, ids and the next id with it.
extension RuleSet where Saved == Self {
    package var saved: Self { self }
    package mutating func restore(_ saved: Self) { self = saved }
}

extension RuleSet {
    package var ruleSet: Self { self }
    package var isActive: Bool { self.count > 0 }

    package mutating func update<R>(now: ContinuousClock.Instant, _ body: (inout Self) -> R) -> R {
        body(&self)
    }
}

/// What `LiveRules` keeps behind its lock: a rule set, or a rule set with what enforces it (the
/// throttle's buckets, `ThrottleState`), which must follow every change of the rules.
package protocol RuleState: Sendable {
    associatedtype Rules: RuleSet
    var ruleSet: Rules { get }
    /// Whether any rule is in force: when not, a task is not asked about (one atomic load).
    var isActive: Bool { get }
    mutating func update<R>(now: ContinuousClock.Instant, _ body: (inout Rules) -> R) -> R
}

/// Where a kind's runtime rules survive a restart (the store's `StateFile`): `load` at start,
/// `save` after a change, which only queues the write, so it may be called under a lock and on an
/// event loop.
package protocol RuleStore<Value>: Sendable {
    associatedtype Value
    func load() -> Value?
    func save(_ value: Value)
}

/// The `Saved` of a kind that comes from the configuration only.
package struct NoSavedRules: Codable, Sendable, Equatable {
    package init() {}
}

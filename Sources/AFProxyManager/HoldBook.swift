import AFProxyModel
import AFProxyRules
import AFProxyStore
import Logging
import Synchronization

/// The hold rules in force, for the session manager: the `HoldRuleSet` behind a lock, saved to
/// the state directory on every change (`holds.json`, a `StateFile`), and asked about each new task. With no
/// rule — the usual case — a new task costs one atomic load here, not a lock every event loop
/// would take in turn.
package final class HoldBook: Sendable {
    private let rules = Locked(HoldRuleSet())
    /// How many rules there are, read without the lock.
    private let count = Atomic<Int>(0)
    /// Where the rules are kept; nil: not kept.
    package let file: StateFile<HoldRuleSet>?

    package init(file: StateFile<HoldRuleSet>?) {
        self.file = file
    }

    /// Saved in `holds.json` there; nothing is saved without a state directory.
    package convenience init(stateDirectory: String?, logger: Logger? = nil) {
        self.init(file: stateDirectory.map { .holds(directory: $0, logger: logger) })
    }

    /// Brings back the rules a previous run saved; answers how many. A file that cannot be read
    /// is kept aside and said in the log (`StateFile.load`): no rule then.
    package func restore() -> Int {
        guard let saved = self.file?.load() else { return 0 }
        self.rules.withLock { rules in
            rules = saved
            self.count.store(rules.rules.count, ordering: .relaxed)
        }
        return saved.rules.count
    }

    package var all: [HoldRule] { self.rules.withLock { $0.rules } }

    package func add(_ conditions: HoldConditions, once: Bool) -> HoldRule {
        self.change { $0.add(conditions, once: once) }
    }

    /// The rule removed, nil when there is none with `id`.
    package func remove(id: Int) -> HoldRule? {
        self.change { $0.remove(id: id) }
    }

    /// The rule that catches a task with these facts, if any (a `once` rule is used up).
    func catchTask(_ facts: @autoclosure () -> HoldFacts) -> Int? {
        guard self.count.load(ordering: .relaxed) > 0 else { return nil }
        let facts = facts()
        return self.change { $0.catchTask(facts) }
    }

    private func change<Result>(_ body: (inout HoldRuleSet) -> Result) -> Result {
        // Saved under the lock, so that the saves reach the file in the order of the changes
        // (a save only queues the write).
        self.rules.withLock { rules in
            let before = rules
            let result = body(&rules)
            self.count.store(rules.rules.count, ordering: .relaxed)
            if rules != before { self.file?.save(rules) }
            return result
        }
    }
}

extension HoldFacts {
    init(_ request: ProxyRequest) {
        self.init(
            host: LoopbackHost.host(ofURL: request.url) ?? "", method: request.method, url: request.url,
            kind: request.kind)
    }

    /// A download task: a GET the daemon makes itself.
    init(download url: String) {
        self.init(host: LoopbackHost.host(ofURL: url) ?? "", method: "GET", url: url, kind: .download)
    }

    init(_ request: StreamRequest) {
        self.init(host: request.host, method: "CONNECT", url: request.authority, kind: .stream)
    }
}

import AFProxyModel
import AFProxyRules

/// The hold rules in force, for the session manager: the hold kind's `LiveRules`, asked about
/// each new task. With no rule — the usual case — a new task costs one atomic load here, not a
/// lock every event loop would take in turn.
package typealias HoldBook = LiveRules<HoldRuleSet>

extension LiveRules where State == HoldRuleSet {
    package var all: [HoldRule] { self.ruleSet.rules }

    package func add(_ conditions: HoldConditions, once: Bool, response: Bool = false) -> HoldRule {
        self.change { $0.add(conditions, once: once, response: response) }
    }

    /// The rule that catches a task with these facts, if any (a `once` rule is used up);
    /// `response`: a rule that holds at the response, asked once the origin's head came.
    func catchTask(_ facts: @autoclosure () -> HoldFacts, response: Bool = false) -> Int? {
        guard self.isActive else { return nil }
        let facts = facts()
        return self.change { $0.catchTask(facts, response: response) }
    }
}

extension HoldFacts {
    init(_ request: ProxyRequest) {
        self.init(
            host: request.host, method: request.method, url: request.url,
            kind: request.kind)
    }

    /// A download task: a GET the daemon makes itself.
    init(download url: String) {
        self.init(host: LoopbackHost.host(ofURL: url) ?? "", method: "GET", url: url, kind: .download)
    }

    init(_ request: StreamRequest) {
        self.init(host: request.host, method: request.method, url: request.url, kind: .stream)
    }
}

import AFProxyModel
import FoundationEssentials

/// The reported `Reachability` and when it changed: a decision that changes status, interface or
/// kind gives a new value to report; one that changes nothing gives nil, so a burst of kernel
/// messages about the same state reports nothing. `changedAt` moves only with the status.
/// Once the watcher failed (`failed`), the status is `unknown` with the reason, for good: a
/// watcher that no longer hears the kernel must not go on saying the network is there.
package struct ReachabilityTracker: Sendable {
    package private(set) var current = Reachability.unknown
    /// The watcher failed: no decision changes the status any more.
    package private(set) var hasFailed = false

    package init() {}

    package mutating func update(
        _ decision: ReachabilityDecision, kind: InterfaceKind?, now: Date
    ) -> Reachability? {
        guard !self.hasFailed else { return nil }
        var next = Reachability(
            status: decision.status, interface: decision.link?.name, interfaceKind: kind?.rawValue,
            changedAt: self.current.changedAt)
        if next.status != self.current.status { next.changedAt = now }
        guard next != self.current else { return nil }
        self.current = next
        return next
    }

    /// The watcher stopped hearing the kernel (`reason`: its error): the value to report, once;
    /// nil when it had failed already, so the failure is reported and logged one time.
    package mutating func failed(_ reason: String, now: Date) -> Reachability? {
        guard !self.hasFailed else { return nil }
        self.hasFailed = true
        self.current = Reachability(status: .unknown, changedAt: now, reason: reason)
        return self.current
    }
}

import AFProxyModel
import FoundationEssentials

/// The reported `Reachability` and when it changed: a decision that changes status, interface or
/// kind gives a new value to report; one that changes nothing gives nil, so a burst of kernel
/// messages about the same state reports nothing. `changedAt` moves only with the status.
package struct ReachabilityTracker: Sendable {
    package private(set) var current = Reachability.unknown

    package init() {}

    package mutating func update(
        _ decision: ReachabilityDecision, kind: InterfaceKind?, now: Date
    ) -> Reachability? {
        var next = Reachability(
            status: decision.status, interface: decision.link?.name, interfaceKind: kind?.rawValue,
            changedAt: self.current.changedAt)
        if next.status != self.current.status { next.changedAt = now }
        guard next != self.current else { return nil }
        self.current = next
        return next
    }
}

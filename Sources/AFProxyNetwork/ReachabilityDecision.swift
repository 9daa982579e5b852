import AFProxyModel
import CNetlink

/// Is the network there, from the tables alone (no I/O, so tested with tables built by hand):
/// `reachable` when a default route, IPv4 `0.0.0.0/0` or IPv6 `::/0`, in the main table and of
/// unicast type (not unreachable, blackhole, prohibit or throw), goes out over an interface that
/// is up (`NetworkLink.isUp`); `unreachable` otherwise; `unknown` until the first dumps finished.
///
/// The interface shown is that of the usable route with the lowest metric, IPv4 before IPv6 on
/// a tie (the one most connections will take).
package struct ReachabilityDecision: Sendable, Equatable {
    package var status: Reachability.Status
    /// The chosen route's interface; nil unless reachable.
    package var link: NetworkLink?

    package init(status: Reachability.Status, link: NetworkLink? = nil) {
        self.status = status
        self.link = link
    }

    package static func decide(_ tables: NetworkTables, synced: Bool = true) -> ReachabilityDecision {
        guard synced else { return ReachabilityDecision(status: .unknown) }
        var best: (metric: UInt32, family: Int, link: NetworkLink)?
        for route in tables.routes where Self.counts(route) {
            for index in route.interfaces {
                guard let link = tables.links[index], link.isUp else { continue }
                let family = route.family == UInt8(AF_INET) ? 0 : 1
                if let current = best,
                    (current.metric, current.family, current.link.index) <= (route.metric, family, index)
                {
                    continue
                }
                best = (route.metric, family, link)
            }
        }
        guard let best else { return ReachabilityDecision(status: .unreachable) }
        return ReachabilityDecision(status: .reachable, link: best.link)
    }

    private static func counts(_ route: NetworkRoute) -> Bool {
        route.table == UInt32(RT_TABLE_MAIN.rawValue) && route.type == UInt8(RTN_UNICAST)
            && (route.family == UInt8(AF_INET) || route.family == UInt8(AF_INET6))
    }
}

import CNetlink

/// What the kernel has told us so far: every link by index and every default route. Notifications
/// and dumps both land here; `ReachabilityDecision` reads it.
package struct NetworkTables: Sendable, Equatable {
    package var links: [Int32: NetworkLink] = [:]
    package var routes: Set<NetworkRoute> = []

    package init(links: [NetworkLink] = [], routes: Set<NetworkRoute> = []) {
        self.links = Dictionary(links.map { ($0.index, $0) }, uniquingKeysWith: { $1 })
        self.routes = routes
    }

    /// A notification: a link or a default route came, changed or went. Answers what kind of
    /// message it was, so the caller knows whether the route table may now be stale.
    @discardableResult
    mutating func apply(_ message: NetlinkMessage) -> NetlinkMessage.Topic {
        let topic = message.topic
        switch topic {
        case .newLink:
            if let link = NetworkLink(payload: message.payload) { self.links[link.index] = link }
        case .deleteLink:
            if let index = message.payload.integer(at: 4, as: Int32.self) { self.links[index] = nil }
        case .newRoute:
            if let route = NetworkRoute(payload: message.payload) { self.routes.update(with: route) }
        case .deleteRoute:
            if let route = NetworkRoute(payload: message.payload) { self.routes.remove(route) }
        case .address, .other:
            break
        }
        return topic
    }

    /// A finished route dump of one family replaces what was known of that family.
    mutating func replaceRoutes(family: UInt8, with routes: Set<NetworkRoute>) {
        self.routes = self.routes.filter { $0.family != family }.union(routes)
    }
}

extension NetlinkMessage {
    /// The rtnetlink messages the watcher tells apart.
    enum Topic: Equatable {
        case newLink, deleteLink, newRoute, deleteRoute, address, other
    }

    var topic: Topic {
        switch Int(self.type) {
        case Int(RTM_NEWLINK): .newLink
        case Int(RTM_DELLINK): .deleteLink
        case Int(RTM_NEWROUTE): .newRoute
        case Int(RTM_DELROUTE): .deleteRoute
        case Int(RTM_NEWADDR), Int(RTM_DELADDR): .address
        default: .other
        }
    }
}

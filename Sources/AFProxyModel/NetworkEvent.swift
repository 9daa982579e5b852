/// The network went away or came back, on the event stream beside the task events:
/// `{"event": "network-lost", "network": {status, interface, interfaceKind, changedAt}}`, with no
/// task. Published by the daemon's network watcher after the session manager has been told.
package struct NetworkEvent: Sendable, Codable, Equatable {
    package enum Kind: String, Sendable, Codable, CaseIterable {
        /// The status became `unreachable`.
        case networkLost = "network-lost"
        /// The status became `reachable` after being `unreachable`.
        case networkRestored = "network-restored"
    }

    package var event: Kind
    package var network: Reachability

    package init(_ event: Kind, network: Reachability) {
        self.event = event
        self.network = network
    }

    /// The event a change from `old` to `new` makes, if any. Leaving `unknown` at start is no
    /// loss or return: nothing was lost. Reachable again over another interface is no event
    /// either (the status did not change).
    package static func between(_ old: Reachability.Status, _ new: Reachability.Status) -> Kind? {
        switch (old, new) {
        case (.reachable, .unreachable), (.unknown, .unreachable): .networkLost
        case (.unreachable, .reachable): .networkRestored
        default: nil
        }
    }
}

/// One line of `GET /v1/events`: a task event (its JSON unchanged: `{"event", "task"}`), a
/// network event (`{"event", "network"}`), or what a slow reader missed (`{"event": "missed",
/// "missed": N}`). Kept apart so that a task event always has its task; decoding tells them apart
/// by the `event` name.
package enum StreamEvent: Sendable, Equatable, Codable {
    case task(TaskEvent)
    case network(NetworkEvent)
    case missed(MissedEvents)

    private enum CodingKeys: String, CodingKey {
        case event
    }

    package init(from decoder: any Decoder) throws {
        let name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .event)
        if NetworkEvent.Kind(rawValue: name) != nil {
            self = .network(try NetworkEvent(from: decoder))
        } else if name == MissedEvents.name {
            self = .missed(try MissedEvents(from: decoder))
        } else {
            self = .task(try TaskEvent(from: decoder))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        switch self {
        case .task(let event): try event.encode(to: encoder)
        case .network(let event): try event.encode(to: encoder)
        case .missed(let missed): try missed.encode(to: encoder)
        }
    }
}

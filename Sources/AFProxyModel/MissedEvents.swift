/// The line a reader of the event stream gets in place of the events it was too slow to take:
/// `{"event": "missed", "missed": N}`, before the next event it does get. Task events and network
/// events count; `progress` does not, because the next one says where the task is.
package struct MissedEvents: Sendable, Equatable, Codable {
    package static let name = "missed"

    package var missed: Int

    package init(_ missed: Int) {
        self.missed = missed
    }

    private enum CodingKeys: String, CodingKey {
        case event
        case missed
    }

    package init(from decoder: any Decoder) throws {
        self.missed = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .missed)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.name, forKey: .event)
        try container.encode(self.missed, forKey: .missed)
    }
}

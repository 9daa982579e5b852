import AFProxyModel
import FoundationEssentials

/// `GET /v1/tasks/{id}/messages`: the WebSocket messages a record rule kept of a stream task, in
/// the order their last bytes passed (`WebSocketMessageLog`), and how many older ones were let
/// go to keep the bounds. A payload is base64, null where the rule keeps none of its direction.
package struct MessageList: Sendable, Codable, Equatable {
    package struct Message: Sendable, Codable, Equatable {
        /// `sent` (client to origin) or `received`.
        package var direction: String
        /// `text`, `binary`, `close`, `ping` or `pong`.
        package var opcode: String
        package var size: Int64
        package var at: Date
        package var payload: String?
        package var cut: Bool

        package init(direction: String, opcode: String, size: Int64, at: Date, payload: String?, cut: Bool) {
            self.direction = direction
            self.opcode = opcode
            self.size = size
            self.at = at
            self.payload = payload
            self.cut = cut
        }

        /// Nil as null: clients see every documented key.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.direction, forKey: .direction)
            try container.encode(self.opcode, forKey: .opcode)
            try container.encode(self.size, forKey: .size)
            try container.encode(self.at, forKey: .at)
            try container.encode(self.payload, forKey: .payload)
            try container.encode(self.cut, forKey: .cut)
        }
    }

    package var messages: [Message]
    package var dropped: Int

    package init(messages: [Message], dropped: Int) {
        self.messages = messages
        self.dropped = dropped
    }

    package init(_ log: WebSocketMessageLog) {
        self.messages = log.messages.map { message in
            Message(
                direction: message.direction.rawValue, opcode: message.opcode.rawValue, size: message.size,
                at: message.at, payload: message.payload.map { Data($0).base64EncodedString() }, cut: message.cut)
        }
        self.dropped = log.dropped
    }
}

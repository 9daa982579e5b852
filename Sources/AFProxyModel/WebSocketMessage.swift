import FoundationEssentials

/// One WebSocket message a record rule kept of a stream task (RFC 6455 §5.6): which way it went,
/// what kind it was, its whole size, when its last byte passed, and its payload (unmasked) up to
/// the rule's limit. A fragmented message is one record, its size the sum of its fragments'.
package struct WebSocketMessage: Sendable, Equatable {
    package enum Direction: String, Sendable, Codable {
        /// Client to origin.
        case sent
        /// Origin to client.
        case received
    }

    package enum Opcode: String, Sendable, Codable {
        case text
        case binary
        case close
        case ping
        case pong

        /// The opcode of a frame that starts a message or is one (§5.2); nil for a continuation
        /// (0) and the reserved ones.
        package init?(code: UInt8) {
            switch code {
            case 1: self = .text
            case 2: self = .binary
            case 8: self = .close
            case 9: self = .ping
            case 10: self = .pong
            default: return nil
            }
        }

        /// The frame's opcode number (§5.2).
        package var code: UInt8 {
            switch self {
            case .text: 1
            case .binary: 2
            case .close: 8
            case .ping: 9
            case .pong: 10
            }
        }
    }

    package var direction: Direction
    package var opcode: Opcode
    /// Payload bytes the message carried, kept or not.
    package var size: Int64
    package var at: Date
    /// The kept payload; nil once it was let go to keep the task's messages within their bound
    /// (`WebSocketMessageLog`).
    package var payload: [UInt8]?
    /// Fewer bytes kept than the message carried.
    package var cut: Bool

    package init(
        direction: Direction, opcode: Opcode, size: Int64, at: Date, payload: [UInt8]?, cut: Bool
    ) {
        self.direction = direction
        self.opcode = opcode
        self.size = size
        self.at = at
        self.payload = payload
        self.cut = cut
    }
}

/// Which relay moved a plain tunnel's bytes (the task's `relay`), so that a person can tell why
/// one tunnel costs more CPU than another, and whether an upgrade or `tunnel-splice = no` kept
/// it on the slower path.
package enum TunnelRelayKind: String, Sendable, Codable, Equatable {
    /// SwiftNIO reads and writes every byte: before splicing starts, where it cannot (a
    /// WebSocket upgrade, a channel without a socket, splicing turned off).
    case nio
    /// The kernel moves the bytes, socket → pipe → socket (`splice(2)`). Kept once it started,
    /// also after a half-close hands the rest of one direction back to NIO.
    case splice
}

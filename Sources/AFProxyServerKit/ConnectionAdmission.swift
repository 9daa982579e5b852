import NIOCore

/// A server's cap on connections and what happens to one over it. `admit` takes a slot that the
/// connection gives back when it closes; `refuse` answers a connection the server will not serve
/// (over the cap, or not allowed) with a prepared response, nothing of its request read or
/// parsed.
///
/// A refused connection lingers half-closed (`RefusedConnectionHandler`) so that its client reads
/// the answer instead of a reset, but only while fewer than `maxLingering` do: beyond them it is
/// written to and closed at once, so that a flood of refused clients cannot hold many descriptors
/// outside `limit`.
package final class ConnectionAdmission: Sendable {
    package let connections: ConnectionLimiter
    /// The refused connections still open, outside `connections`.
    let lingering: ConnectionLimiter
    package let linger: TimeAmount

    package init(limit: Int, linger: TimeAmount, maxLingering: Int) {
        self.connections = ConnectionLimiter(limit: limit)
        self.lingering = ConnectionLimiter(limit: maxLingering)
        self.linger = linger
    }

    package var limit: Int { self.connections.limit }
    package var openConnections: Int { self.connections.count }

    /// Takes a slot for `channel`, given back when it closes; false when all are taken.
    package func admit(_ channel: any Channel) -> Bool {
        let connections = self.connections
        guard connections.acquire() else { return false }
        channel.closeFuture.whenComplete { _ in connections.release() }
        return true
    }

    /// Makes `channel`'s whole pipeline the answer `response`.
    package func refuse(_ channel: any Channel, with response: ByteBuffer) -> EventLoopFuture<Void> {
        let lingering = self.lingering
        guard lingering.acquire() else {
            channel.writeAndFlush(response).whenComplete { _ in channel.close(promise: nil) }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        channel.closeFuture.whenComplete { _ in lingering.release() }
        let linger = self.linger
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler(response: response, linger: linger))
        }
    }
}

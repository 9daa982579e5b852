import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The listening sockets of one server, bound here or adopted from systemd, and their graceful
/// stop. Each server runs as a service of the daemon's one group; its `run()` is `serve(then:)`:
/// it serves until the group asks it to stop (or is canceled), then quiesces (closes every
/// listening socket, so no new connection is accepted while open ones go on) and then runs the
/// server's own drain, which bounds itself (the control socket gives its streams two seconds).
/// The group stops its services one at a time in reverse order, so the order in which the
/// servers are listed is the order, reversed, in which they stop.
///
/// The connections still open after the drain close with the event loops, at the very end.
package final class ServerSockets: Sendable {
    /// A bind that came after the stop: the socket is closed at once.
    package struct Stopped: Error, CustomStringConvertible {
        package var description: String { "the server is stopping; it takes no new socket" }
    }

    private enum State {
        case serving([any Channel])
        case stopped
    }

    /// NIO's lock, a pthread mutex that ThreadSanitizer sees (`Locked` in the model says why
    /// `Synchronization.Mutex` is not used); this module is NIO only.
    private let state = NIOLockedValueBox(State.serving([]))

    package init() {}

    /// Binds `host:port` (port 0 picks one) with `bootstrap`; answers the listening channel.
    @discardableResult
    package func bind(_ bootstrap: ServerBootstrap, host: String, port: Int) async throws -> any Channel {
        try await self.add(bootstrap.bind(host: host, port: port).get())
    }

    /// Adopts a listening socket handed over by systemd.
    @discardableResult
    package func adopt(_ bootstrap: ServerBootstrap, descriptor: CInt) async throws -> any Channel {
        try await self.add(bootstrap.withBoundSocket(descriptor).get())
    }

    /// Keeps `channel`, a listening socket the server bound itself, until the stop; after the
    /// stop it is closed and `Stopped` thrown.
    @discardableResult
    package func add(_ channel: any Channel) async throws -> any Channel {
        let kept = self.state.withLockedValue { state in
            guard case .serving(var channels) = state else { return false }
            channels.append(channel)
            state = .serving(channels)
            return true
        }
        guard kept else {
            try? await channel.close()
            throw Stopped()
        }
        return channel
    }

    /// Stops accepting: closes every listening socket. Open connections are left alone.
    package func quiesce() async {
        let channels = self.state.withLockedValue { state in
            defer { state = .stopped }
            guard case .serving(let channels) = state else { return [any Channel]() }
            return channels
        }
        for channel in channels {
            try? await channel.close()
        }
    }

    /// A server's `run()`: serves until graceful shutdown or cancellation, quiesces, then drains.
    package func serve(then drain: () async -> Void = {}) async {
        try? await gracefulShutdown()
        await self.quiesce()
        await drain()
    }
}

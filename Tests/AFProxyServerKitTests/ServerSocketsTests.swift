import NIOCore
import NIOPosix
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing

@testable import AFProxyServerKit

/// Real listening sockets on 127.0.0.1: the graceful stop closes them, then drains; a socket that
/// comes after the stop is refused and closed.
@Suite struct ServerSocketsTests {
    private func bootstrap() -> ServerBootstrap {
        ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
    }

    @Test func gracefulShutdownClosesTheSocketsThenDrains() async throws {
        let sockets = ServerSockets()
        let first = try await sockets.bind(self.bootstrap(), host: "127.0.0.1", port: 0)
        let second = try await sockets.bind(self.bootstrap(), host: "127.0.0.1", port: 0)
        let closedBeforeDrain = Flag()
        #expect(first.isActive && second.isActive)
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            await sockets.serve {
                if !first.isActive && !second.isActive { closedBeforeDrain.set() }
            }
        }
        #expect(closedBeforeDrain.isSet)
    }

    @Test func aSocketAfterTheStopIsClosedAndRefused() async throws {
        let sockets = ServerSockets()
        await sockets.quiesce()
        let late = try await self.bootstrap().bind(host: "127.0.0.1", port: 0).get()
        await #expect(throws: ServerSockets.Stopped.self) { try await sockets.add(late) }
        try await late.closeFuture.get()
        #expect(!late.isActive)
    }

    @Test func cancellationStopsAsGracefulShutdownDoes() async throws {
        let sockets = ServerSockets()
        let channel = try await sockets.bind(self.bootstrap(), host: "127.0.0.1", port: 0)
        let drained = Flag()
        let serving = Task { await sockets.serve { drained.set() } }
        serving.cancel()
        await serving.value
        #expect(!channel.isActive)
        #expect(drained.isSet)
    }
}

private final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { self.value.store(true, ordering: .relaxed) }
    var isSet: Bool { self.value.load(ordering: .relaxed) }
}

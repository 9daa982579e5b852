import NIOCore
import NIOPosix
import Testing

@testable import AFProxyListener

/// The kernel's unsent bytes read off a real loopback socket: none while the peer reads, some
/// once a peer that reads nothing lets its receive buffer fill; nothing off the channel's loop.
@Suite struct ClientSendQueueTests {
    /// Accepts one connection and never reads from it.
    private final class Accepted: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let channel: EventLoopPromise<any Channel>
        init(_ promise: EventLoopPromise<any Channel>) { self.channel = promise }
        func channelActive(context: ChannelHandlerContext) { self.channel.succeed(context.channel) }
    }

    @Test func aSocketWhosePeerStopsReadingBacksUp() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let accepted = group.next().makePromise(of: (any Channel).self)
        let server = try await ServerBootstrap(group: group)
            .childChannelOption(.autoRead, value: false)
            .childChannelOption(.socketOption(.so_rcvbuf), value: 4096)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Accepted(accepted))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let client = try await ClientBootstrap(group: group).connect(to: server.localAddress!).get()
        _ = try await accepted.futureResult.get()

        #expect(ClientSendQueue.unsent(on: client) == nil, "off the loop")
        let idle = try await client.eventLoop.submit { ClientSendQueue.unsent(on: client) }.get()
        #expect(idle == 0)

        // Four MiB to a peer that reads nothing: most of it stays in the sender's kernel queue.
        let chunk = ByteBuffer(repeating: 0x61, count: 64 << 10)
        for _ in 0..<64 { client.write(chunk, promise: nil) }
        client.flush()
        var backlog = 0
        for _ in 0..<1000 where backlog == 0 {
            backlog = try await client.eventLoop.submit { ClientSendQueue.unsent(on: client) ?? 0 }.get()
            if backlog == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(backlog > 0)
        try await client.close()
        try await server.close()
        try await group.shutdownGracefully()
    }
}

import AFProxyModel
import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyTunnel

/// The relay's two glue handlers on embedded channels sharing one loop, as the client's and the
/// upstream channel share the client connection's loop.
@Suite struct TunnelGlueTests {
    private final class Recorder: TunnelTransferDelegate, @unchecked Sendable {
        var firstBytes = 0
        var ends: [TunnelEnd] = []

        func tunnelDidConnect(_ connection: TunnelConnection) {}
        func tunnelDidReceiveFirstByte() { self.firstBytes += 1 }
        func tunnelDidReceiveAnswer(status: Int?) {}
        func tunnelDidSplice() {}
        func tunnelDidComplete(_ end: TunnelEnd) { self.ends.append(end) }
    }

    /// Counts the `read()` calls the glue lets through to its channel.
    private final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var reads = 0

        func read(context: ChannelHandlerContext) {
            self.reads += 1
            context.read()
        }
    }

    private let loop = EmbeddedEventLoop()
    private let counters = TunnelCounters()
    private let recorder = Recorder()
    private let relay: TunnelRelay
    private let client: EmbeddedChannel
    private let upstream: EmbeddedChannel
    private let clientReads = ReadCounter()

    init() throws {
        self.relay = TunnelRelay(
            host: "origin.test", port: 443, counters: self.counters, established: self.loop.makePromise(),
            delegate: self.recorder, connectTimeout: .seconds(1), idleTimeout: nil, eventLoop: self.loop)
        let clientGlue = TunnelGlue(side: .client, relay: self.relay, counters: self.counters)
        let upstreamGlue = TunnelGlue(side: .upstream, relay: self.relay, counters: self.counters)
        self.client = EmbeddedChannel(loop: self.loop)
        self.upstream = EmbeddedChannel(handler: upstreamGlue, loop: self.loop)
        try self.client.pipeline.syncOperations.addHandlers([self.clientReads, clientGlue])
        clientGlue.partner = upstreamGlue
        upstreamGlue.partner = clientGlue
    }

    /// Ends the relay, which fails its never-connected promise (a leaked promise traps).
    private func finish() {
        self.relay.cancel(.canceled())
    }

    private func outbound(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    @Test func bytesCrossAsTheyAreAndAreCountedByDirection() throws {
        defer { self.finish() }
        try self.client.writeInbound(ByteBuffer(string: "hello"))
        try self.upstream.writeInbound(ByteBuffer(string: "world!"))
        try self.upstream.writeInbound(ByteBuffer(string: "?"))
        #expect(try self.outbound(self.upstream) == "hello")
        #expect(try self.outbound(self.client) == "world!?")
        #expect(self.counters.uploaded.load(ordering: .relaxed) == 5)
        #expect(self.counters.downloaded.load(ordering: .relaxed) == 7)
        #expect(self.recorder.firstBytes == 1)
    }

    @Test func aPausedTunnelHoldsWhatItReadsUncountedAndReadsNoMoreUntilReleased() throws {
        defer { self.finish() }
        self.counters.setPaused(true)
        try self.client.writeInbound(ByteBuffer(string: "held"))
        self.client.read()
        #expect(self.clientReads.reads == 0)
        #expect(try self.outbound(self.upstream) == "")
        #expect(self.counters.uploaded.load(ordering: .relaxed) == 0)

        self.counters.setPaused(false)
        let glue = try self.client.pipeline.syncOperations.handler(type: TunnelGlue.self)
        glue.release()
        #expect(try self.outbound(self.upstream) == "held")
        #expect(self.counters.uploaded.load(ordering: .relaxed) == 4)
        #expect(self.clientReads.reads == 1)  // the held read goes through at the release
    }

    @Test func aCancelBeforeTheTunnelOpenedReportsItsFailureOnce() throws {
        self.relay.cancel(.canceled())
        self.relay.cancel(.canceled())
        #expect(self.recorder.ends == [TunnelEnd(.canceled())])
    }
}

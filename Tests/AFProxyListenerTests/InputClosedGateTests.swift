import NIOCore
import NIOEmbedded
import Testing

@testable import AFProxyListener

/// The gate that holds a client's half-close back while a CONNECT's decoder leaves, so that the
/// bytes the decoder still forwards reach the tunnel before the end of input does.
@Suite struct InputClosedGateTests {
    private struct Custom: Equatable {
        var name: String
    }

    private func channel() throws -> (EmbeddedChannel, InputClosedGate, InboundRecorder<ByteBuffer>) {
        let channel = EmbeddedChannel()
        let gate = InputClosedGate()
        let recorder = InboundRecorder<ByteBuffer>()
        try channel.pipeline.syncOperations.addHandler(gate)
        try channel.pipeline.syncOperations.addHandler(recorder)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, gate, recorder)
    }

    /// What reached the end of the pipeline, as `read TEXT`, `inputClosed`, `outputClosed` or `custom NAME`.
    private func seen(_ recorder: InboundRecorder<ByteBuffer>) -> [String] {
        recorder.seen.map { item in
            switch item {
            case .read(let buffer): "read \(String(buffer: buffer))"
            case .event(let event as ChannelEvent) where event == .inputClosed: "inputClosed"
            case .event(let event as ChannelEvent) where event == .outputClosed: "outputClosed"
            case .event(let event as Custom): "custom \(event.name)"
            case .event(let event): "other event \(event)"
            case .error(let error): "error \(error)"
            }
        }
    }

    private func isInPipeline(_ channel: EmbeddedChannel) -> Bool {
        (try? channel.pipeline.syncOperations.handler(type: InputClosedGate.self)) != nil
    }

    @Test func holdsTheHalfCloseUntilOpenThenLetsItThroughAfterTheBytes() throws {
        let (channel, gate, recorder) = try self.channel()
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(self.seen(recorder) == [])
        // What the leaving decoder forwards arrives while the half-close is held.
        try channel.writeInbound(ByteBuffer(string: "behind the CONNECT"))
        #expect(self.seen(recorder) == ["read behind the CONNECT"])
        gate.open()
        channel.embeddedEventLoop.run()
        #expect(self.seen(recorder) == ["read behind the CONNECT", "inputClosed"])
        #expect(!self.isInPipeline(channel))
    }

    @Test func aHalfCloseHeldTwiceIsLetThroughOnce() throws {
        let (channel, gate, recorder) = try self.channel()
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        gate.open()
        channel.embeddedEventLoop.run()
        #expect(self.seen(recorder) == ["inputClosed"])
    }

    @Test func withNothingHeldOpenOnlyLeaves() throws {
        let (channel, gate, recorder) = try self.channel()
        gate.open()
        channel.embeddedEventLoop.run()
        #expect(self.seen(recorder) == [])
        #expect(!self.isInPipeline(channel))
        // Gone: later events go straight through, and a second open does nothing.
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        gate.open()
        #expect(self.seen(recorder) == ["inputClosed"])
    }

    @Test func otherEventsAndBytesPassAtOnce() throws {
        let (channel, _, recorder) = try self.channel()
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.outputClosed)
        channel.pipeline.fireUserInboundEventTriggered(Custom(name: "phase"))
        try channel.writeInbound(ByteBuffer(string: "data"))
        #expect(self.seen(recorder) == ["outputClosed", "custom phase", "read data"])
        #expect(self.isInPipeline(channel))
    }
}

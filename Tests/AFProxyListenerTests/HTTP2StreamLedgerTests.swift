import AFProxyModel
import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing

@testable import AFProxyListener

@Suite struct HTTP2StreamLedgerTests {
    final class Recorder: NIOHTTP2StreamDelegate {
        let calls = Locked([String]())
        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
            self.calls.withLock { $0.append("+\(Int(id))") }
        }
        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
            self.calls.withLock { $0.append("-\(Int(id))") }
        }
    }

    /// A stream reset while its first frame was handled is told closed before (and instead of)
    /// opened: the close is not passed on; the others are, in order.
    @Test func passesOnOnlyTheClosesOfStreamsItSawOpen() {
        let recorder = Recorder()
        let ledger = HTTP2StreamLedger(passingTo: recorder)
        let channel = EmbeddedChannel()
        ledger.streamClosed(1, channel: channel)
        ledger.streamCreated(3, channel: channel)
        ledger.streamClosed(3, channel: channel)
        ledger.streamClosed(3, channel: channel)
        #expect(recorder.calls.withLock { $0 } == ["+3", "-3"])
    }
}

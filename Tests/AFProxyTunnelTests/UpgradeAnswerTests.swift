import AFProxyTunnel
import Testing

@Suite struct UpgradeAnswerTests {
    private func outcome(_ chunks: String...) -> UpgradeAnswer.Outcome {
        var answer = UpgradeAnswer()
        var last = UpgradeAnswer.Outcome.pending
        for chunk in chunks { last = answer.read(Array(chunk.utf8)) }
        return last
    }

    @Test func readsTheStatusHoweverTheLineIsSplit() {
        #expect(self.outcome("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n") == .status(101))
        #expect(self.outcome("HTT", "P/1.1 4", "04 Not Found\r", "\n") == .status(404))
        #expect(self.outcome("HTTP/1.0 200\r\n") == .status(200))
        #expect(self.outcome("HTTP/1.1 101 Switching") == .pending)
    }

    @Test func anythingElseIsMalformed() {
        #expect(self.outcome("SSH-2.0-OpenSSH\r\n") == .malformed)
        #expect(self.outcome("HTTP/2 101\r\n") == .malformed)
        #expect(self.outcome("HTTP/1.1 10x\r\n") == .malformed)
        #expect(self.outcome("HTTP/1.1 1010\r\n") == .malformed)
        #expect(self.outcome(String(repeating: "a", count: 2000)) == .malformed)
    }

    @Test func theOutcomeStaysOnceKnown() {
        var answer = UpgradeAnswer()
        #expect(answer.read(Array("HTTP/1.1 101 OK\n".utf8)) == .status(101))
        #expect(answer.read(Array("garbage\n".utf8)) == .status(101))
    }
}

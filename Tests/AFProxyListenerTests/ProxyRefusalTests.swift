import NIOCore
import NIOHTTP1
import Testing

@testable import AFProxyListener

/// The answers the proxy writes itself as raw bytes: their status line, framing and Via.
@Suite struct ProxyRefusalTests {
    private func lines(_ buffer: ByteBuffer) -> (head: [String], body: String) {
        let text = String(buffer: buffer)
        let parts = text.split(separator: "\r\n\r\n", maxSplits: 1, omittingEmptySubsequences: false)
        return (parts[0].split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init), String(parts[1]))
    }

    @Test func overTheConnectionLimitIs503WithRetryAfterAndTheConfiguredVia() {
        let (head, body) = self.lines(ProxyListener.overLimitRefusal(limit: 2).bytes(version: .http1_1, via: "edge-7"))
        #expect(head.first == "HTTP/1.1 503 Service Unavailable")
        #expect(body == "503 Service Unavailable: the proxy is at its limit of 2 client connections\n")
        #expect(head.contains("Content-Length: \(body.utf8.count)"))
        #expect(head.contains("Retry-After: 1"))
        #expect(head.contains("Via: 1.1 edge-7"))
        #expect(head.contains("Connection: close"))
        #expect(head.contains("Content-Type: text/plain; charset=utf-8"))
        #expect(head.contains { $0.hasPrefix("Date: ") })
    }

    @Test func retryAfterOnlyWhenSet() {
        let (head, _) = self.lines(ProxyRefusal(.badRequest, "no").bytes(version: .http1_1, via: "afproxy"))
        #expect(!head.contains { $0.hasPrefix("Retry-After") })
        let (response, _) = ProxyRefusal(.serviceUnavailable, "later", retryAfter: 5).response(
            version: .http1_0, via: "p")
        #expect(response.headers["Retry-After"] == ["5"])
        #expect(response.headers["Via"] == ["1.0 p"])
    }
}

import AFProxyListener
import NIOHTTP1
import Testing

@Suite struct ViaEntriesTests {
    @Test func readsTheReceivedByOfEachEntrySkippingCommentsAndEmptyElements() {
        let value = "1.0 fred, 1.1 p.example.net (Apache/1.1, with a comma), , HTTP/2 edge:8080 (x (nested, y))"
        #expect(ViaEntries.receivedBy(value) == ["fred", "p.example.net", "edge:8080"])
        #expect(ViaEntries.receivedBy("1.1\tTAB-name") == ["TAB-name"])
        #expect(ViaEntries.receivedBy("1.1 x (a \\) still comment, b) , 1.0 y") == ["x", "y"])
        #expect(ViaEntries.receivedBy("") == [])
        #expect(ViaEntries.receivedBy("1.1") == [])
    }

    @Test func aLoopIsAnEntryReceivedByUsIgnoringCase() {
        #expect(ViaEntries.contains("1.1 other, 1.0 AFProxy (comment)", receivedBy: "afproxy"))
        #expect(!ViaEntries.contains("1.1 afproxy-2", receivedBy: "afproxy"))
        #expect(!ViaEntries.contains("1.1 other (via afproxy)", receivedBy: "afproxy"))
        #expect(!ViaEntries.contains("1.1 cache.example, 1.0 squid (squid/5.7)", receivedBy: "a"))
        #expect(!ViaEntries.contains("a 1.1", receivedBy: "a"))
        #expect(ViaEntries.contains("1.1 cache.example, 1.1 a", receivedBy: "A"))
    }

    @Test func aShortViaNameIsNoFalseLoop() throws {
        let validator = RequestValidator(via: "a", maxHeaderBytes: 64 * 1024)
        let head = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: "http://h/", headers: ["Via": "1.1 squid.local (squid/5.7)"])
        let request = try validator.validate(head, client: "c").get()
        #expect(request.headers.first("via") == "1.1 squid.local (squid/5.7), 1.1 a")
        let connect = HTTPRequestHead(
            version: .http1_1, method: .CONNECT, uri: "h:443", headers: ["Via": "1.1 cache.lan"])
        #expect((try? validator.validateConnect(connect, client: "c").get()) != nil)
        let loop = HTTPRequestHead(version: .http1_1, method: .GET, uri: "http://h/", headers: ["Via": "1.1 A"])
        guard case .failure(let refusal) = validator.validate(loop, client: "c") else {
            Issue.record("a request received by this proxy was let through")
            return
        }
        #expect(refusal.status == .loopDetected)
    }
}

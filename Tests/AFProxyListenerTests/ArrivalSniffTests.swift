import Testing

@testable import AFProxyListener

/// The first bytes of SOCKS5 and captured connections, in the pieces clients send them in.
@Suite struct ArrivalSniffTests {
    typealias Hello = HandshakeVerdictTests

    func verdict(_ bytes: [UInt8], chunk: Int = 3) -> ArrivalSniff.Verdict? {
        var sniff = ArrivalSniff()
        var verdict: ArrivalSniff.Verdict?
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            verdict = sniff.read(bytes[start..<min(start + chunk, bytes.count)])
        }
        return verdict
    }

    @Test func aRequestLineIsHTTPOnceItsMethodEnds() {
        #expect(self.verdict(Array("GET / HTTP/1.1\r\n".utf8)) == .http)
        #expect(self.verdict(Array("M-SEARCH * HTTP/1.1\r\n".utf8)) == .http)
        #expect(self.verdict(Array("PROPF".utf8)) == nil)
        #expect(self.verdict(Array("get / HTTP/1.1".utf8)) == .other)
        #expect(self.verdict(Array(" GET".utf8)) == .other)
        #expect(self.verdict(Array(String(repeating: "A", count: 40).utf8)) == .other)
        #expect(self.verdict(Array("SSH-2.0-OpenSSH_9.2\r\n".utf8)) == .other)
    }

    @Test func aClientHelloIsTLSWithItsServerName() {
        let named = Hello.hello(suites: [0x1301], tls13: true, serverName: "API.Example.test")
        #expect(self.verdict(Hello.record(22, Hello.message(1, named))) == .tls(serverName: "api.example.test"))
        let unnamed = Hello.hello(suites: [0x1301], tls13: true)
        #expect(self.verdict(Hello.record(22, Hello.message(1, unnamed)), chunk: 1) == .tls(serverName: nil))
        // Half a hello: no verdict yet; a handshake record with no hello in it: bytes.
        #expect(self.verdict(Array(Hello.record(22, Hello.message(1, named)).dropLast(5))) == nil)
        #expect(self.verdict(Hello.record(22, Hello.message(2, [1, 2, 3]))) == .other)
    }

    @Test func aNameThatIsNoHostNameNamesNothing() {
        #expect(ClientHelloOffer.hostName(Array("a b".utf8)) == nil)
        #expect(ClientHelloOffer.hostName([]) == nil)
        #expect(ClientHelloOffer.hostName(Array("xn--bcher-kva.test".utf8)) == "xn--bcher-kva.test")
    }

    @Test func whatIsNeitherIsBytesAndSettlingDecides() {
        #expect(self.verdict([0, 1, 2, 3]) == .other)
        var sniff = ArrivalSniff()
        #expect(sniff.read(Array("GE".utf8)) == nil)
        #expect(sniff.settle() == .other)
        #expect(sniff.read(Array("T ".utf8)) == .other)  // a verdict, once given, stays
    }
}

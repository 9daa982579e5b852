import AFProxyModel
import NIOCore
import Testing

@testable import AFProxyListener

/// TLS bytes as clients and afproxy send them, built by hand, through `TLSRecordScanner`,
/// `ClientHelloOffer` and `HandshakeVerdict`.
@Suite struct HandshakeVerdictTests {
    static func record(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        [type, 3, 3, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    static func message(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        [type, UInt8(body.count >> 16), UInt8((body.count >> 8) & 0xFF), UInt8(body.count & 0xFF)] + body
    }

    static func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    /// A ClientHello body offering `suites`, with TLS 1.3 in supported_versions when `tls13`,
    /// `schemes` as signature_algorithms and `serverName` as server_name when given.
    static func hello(suites: [Int], tls13: Bool, schemes: [Int]? = nil, serverName: String? = nil) -> [UInt8] {
        var extensions: [UInt8] = []
        if let serverName {
            let name = Array(serverName.utf8)
            let entry = [0] + u16(name.count) + name
            extensions += u16(0x0000) + u16(entry.count + 2) + u16(entry.count) + entry
        }
        if tls13 { extensions += u16(0x002B) + u16(3) + [2, 3, 4] }
        if let schemes {
            let list = schemes.flatMap(u16)
            extensions += u16(0x000D) + u16(list.count + 2) + u16(list.count) + list
        }
        let list = suites.flatMap(u16)
        return [3, 3] + [UInt8](repeating: 7, count: 32) + [0] + u16(list.count) + list + [1, 0]
            + u16(extensions.count) + extensions
    }

    static let modernHello = hello(suites: [0x1301, 0xC02B, 0xC02F], tls13: true, schemes: [0x0403, 0x0804])
    static let rsaOnlyHello = hello(suites: [0xC02F], tls13: false, schemes: [0x0401, 0x0804])

    /// afproxy's TLS 1.3 answer: ServerHello in the clear, the compatibility ChangeCipherSpec,
    /// then the encrypted rest of its flight.
    static let serverFlight13 =
        record(22, message(2, [UInt8](repeating: 1, count: 80))) + record(20, [1])
        + record(23, [UInt8](repeating: 9, count: 900))

    static func records(client: [UInt8], server: [UInt8] = [], chunk: Int = 7) -> HandshakeRecords {
        var records = HandshakeRecords()
        for start in stride(from: 0, to: client.count, by: chunk) {
            records.client.scan(client[start..<min(start + chunk, client.count)])
        }
        for start in stride(from: 0, to: server.count, by: chunk) {
            records.server.scan(server[start..<min(start + chunk, server.count)])
        }
        return records
    }

    static let badRecord =
        "handshakeFailed(NIOSSL.BoringSSLError.sslError([Error: 268435605 error:10000095:SSL "
        + "routines:OPENSSL_internal:BAD_PACKET_LENGTH]))"

    @Test func aClientHelloIsReadAcrossChunksAndTellsWhatItAccepts() throws {
        let records = Self.records(client: Self.record(22, Self.message(1, Self.modernHello)), chunk: 3)
        let offer = try #require(records.clientHello)
        #expect(offer.tls13 && offer.ecdsaSuite && offer.acceptsECDSA)
        let rsa = try #require(ClientHelloOffer(body: Self.rsaOnlyHello))
        #expect(!rsa.tls13 && !rsa.ecdsaSuite && !rsa.acceptsECDSA)
        // A TLS 1.3 client that lists no ECDSA signature scheme cannot take an ECDSA leaf either.
        let noECDSA = try #require(ClientHelloOffer(body: Self.hello(suites: [0x1301], tls13: true, schemes: [0x0804])))
        #expect(!noECDSA.acceptsECDSA)
        #expect(ClientHelloOffer(body: [3, 3, 1]) == nil)
    }

    @Test func theHelloIsSettledWhenWholeOrWhenItIsSomethingElse() {
        let hello = Self.record(22, Self.message(1, Self.modernHello))
        var partial = TLSRecordScanner()
        partial.scan(hello.dropLast(10))
        #expect(!partial.helloSettled)
        partial.scan(hello.suffix(10))
        #expect(partial.helloSettled && partial.firstMessage == Self.modernHello)
        // A handshake record whose message is no ClientHello (and claims 16 MiB).
        var other = TLSRecordScanner()
        other.scan([22, 3, 1, 0, 16] + [UInt8](repeating: 0xFF, count: 16))
        #expect(other.helloSettled && other.firstMessage == nil && !other.notTLS)
        var ssh = TLSRecordScanner()
        ssh.scan(Array("SSH-2.0-OpenSSH_9.2\r\n".utf8))
        #expect(ssh.helloSettled && ssh.notTLS)
    }

    @Test func randomBytesAndAnSSHBannerAreNotTLSAndPassNothingThrough() {
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<512).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for sent in [noise, Array("SSH-2.0-OpenSSH_9.2\r\n".utf8)] {
            // What afproxy sends back is its own alert: never its certificate.
            let records = Self.records(client: sent, server: Self.record(21, [2, 50]))
            #expect(!records.certificateSent)
            #expect(records.clientHello == nil)
            let verdict = HandshakeVerdict.failed(records, error: Self.badRecord, host: "api.test")
            #expect(verdict.passthrough == nil)
            #expect(verdict.failure.code == "client-tls-failed")
            #expect(verdict.failure.message.contains("not a TLS handshake"))
            #expect(HandshakeVerdict.closed(records, host: "api.test").passthrough == nil)
        }
    }

    @Test func aPlaintextUnknownCAAlertAfterTheCertificateIsNamedAndPassesTheHostThrough() {
        let client = Self.record(22, Self.message(1, Self.modernHello)) + Self.record(21, [2, 48])
        let records = Self.records(client: client, server: Self.serverFlight13)
        #expect(records.certificateSent)
        #expect(records.clientAlert == "unknown_ca")
        let verdict = HandshakeVerdict.failed(records, error: Self.badRecord, host: "api.test")
        #expect(verdict.failure.code == "client-tls-failed")
        #expect(verdict.failure.message.contains("TLS alert unknown_ca"))
        #expect(verdict.passthrough == .now("the client sent TLS alert unknown_ca after afproxy's certificate"))
    }

    @Test func anUnknownCAAlertBoringSSLReadPassesTheHostThroughOnlyAfterTheCertificate() {
        let error =
            "handshakeFailed(sslError([Error: 268436502 error:10000416:SSL routines:OPENSSL_internal:TLSV1_ALERT_UNKNOWN_CA]))"
        let hello = Self.record(22, Self.message(1, Self.modernHello))
        let after = HandshakeVerdict.failed(
            Self.records(client: hello, server: Self.serverFlight13), error: error, host: "h")
        #expect(after.passthrough == .now("the client sent TLS alert unknown_ca after afproxy's certificate"))
        #expect(after.failure.message.contains("unknown_ca"))
        let before = HandshakeVerdict.failed(Self.records(client: hello), error: error, host: "h")
        #expect(before.passthrough == nil)
    }

    @Test func anAlertBoringSSLReadItselfIsNamedToo() {
        let records = Self.records(
            client: Self.record(22, Self.message(1, Self.modernHello)), server: Self.serverFlight13)
        let verdict = HandshakeVerdict.failed(
            records, error: "error:1000041a:SSL routines:OPENSSL_internal:TLSV1_ALERT_DECODE_ERROR", host: "h")
        #expect(verdict.failure.message == "the client ended the TLS handshake with alert decode_error")
        #expect(verdict.passthrough == nil)
    }

    @Test func aCertificateAlertBeforeAnyCertificateWasSentPassesNothingThrough() {
        // A forged "refusal": a ClientHello afproxy never answered, then unknown_ca.
        let client = Self.record(22, Self.message(1, Self.modernHello)) + Self.record(21, [2, 48])
        let records = Self.records(client: client, server: Self.record(21, [2, 40]))
        let verdict = HandshakeVerdict.failed(records, error: Self.badRecord, host: "h")
        #expect(verdict.passthrough == nil)
        #expect(verdict.failure.message.contains("alert unknown_ca"))
    }

    @Test func aTLS12CertificateInTheClearCountsAsSent() {
        let flight = Self.record(22, Self.message(2, [1, 2, 3]) + Self.message(11, [UInt8](repeating: 4, count: 300)))
        var records = HandshakeRecords()
        records.server.scan(flight)
        #expect(records.certificateSent)
        // A HelloRetryRequest alone (ServerHello type, no encrypted record) does not.
        var retry = HandshakeRecords()
        retry.server.scan(Self.record(22, Self.message(2, [1])) + Self.record(20, [1]))
        #expect(!retry.certificateSent)
    }

    @Test func aSilentCloseAfterTheCertificateIsALikelyRejectionCountedOnRepeat() {
        let records = Self.records(
            client: Self.record(22, Self.message(1, Self.modernHello)), server: Self.serverFlight13)
        let closed = HandshakeVerdict.closed(records, host: "api.test")
        #expect(closed.failure.code == "client-rejected-certificate")
        #expect(closed.failure.message.contains("api.test"))
        #expect(closed.passthrough == .onRepeat(HandshakeVerdict.silentReason))
        let after = HandshakeVerdict.closedAfterHandshake(host: "api.test", after: .milliseconds(5))
        #expect(after?.failure.code == "client-rejected-certificate")
        #expect(after?.passthrough == .onRepeat(HandshakeVerdict.silentReason))
        // An unused connection closed a while after its handshake (a browser's preconnect) is no verdict.
        #expect(HandshakeVerdict.closedAfterHandshake(host: "api.test", after: .seconds(3)) == nil)
        // swift-nio-ssl's error for the same close.
        let eof = "handshakeFailed(NIOSSL.BoringSSLError.sslError([Error:  EOF during handshake]))"
        #expect(HandshakeVerdict.failed(records, error: eof, host: "api.test") == closed)
        // Closed before afproxy's certificate: an ordinary failed handshake.
        let early = Self.records(client: Self.record(22, Self.message(1, Self.modernHello)))
        #expect(
            HandshakeVerdict.closed(early, host: "h")
                == HandshakeVerdict(
                    failure: .clientTLSFailed("the client closed its connection during the TLS handshake")))
    }

    @Test func aCipherMismatchIsNotCalledBytesThatAreNotTLS() {
        let records = Self.records(
            client: Self.record(22, Self.message(1, Self.rsaOnlyHello)), server: Self.record(21, [2, 40]))
        let verdict = HandshakeVerdict.failed(
            records, error: "error:100000b8:SSL routines:OPENSSL_internal:NO_SHARED_CIPHER", host: "h")
        #expect(
            verdict.failure.message
                == "the client offers no cipher suite afproxy's certificate can serve (NO_SHARED_CIPHER)")
        #expect(verdict.passthrough == nil)
    }

    @Test func plainHTTPIsNamed() {
        let records = Self.records(client: Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(records.client.notTLS)
        let verdict = HandshakeVerdict.failed(records, error: "OPENSSL_internal:HTTP_REQUEST", host: "h")
        #expect(verdict.failure.message.contains("plain HTTP"))
    }
}

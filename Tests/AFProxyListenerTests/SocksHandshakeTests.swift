import AFProxyModel
import AFProxyRules
import NIOCore
import Testing

@testable import AFProxyListener

/// The SOCKS5 handshake as a value: what each client message gets, in order, however the bytes
/// are cut.
@Suite struct SocksHandshakeTests {
    /// Greeting (no auth), then CONNECT to example.org:443 by name.
    static let byName: [UInt8] =
        [0x05, 0x01, 0x00] + [0x05, 0x01, 0x00, 0x03, 11] + Array("example.org".utf8) + [0x01, 0xBB]

    /// Feeds `bytes` in pieces of `piece` and collects the steps up to the first that is not a reply.
    static func steps(_ machine: inout SocksHandshake, _ bytes: [UInt8], piece: Int) -> [SocksHandshake.Step] {
        var buffer = ByteBuffer()
        var steps: [SocksHandshake.Step] = []
        var offset = 0
        while offset < bytes.count {
            buffer.writeBytes(bytes[offset..<min(offset + piece, bytes.count)])
            offset += piece
            while true {
                let step = machine.read(&buffer)
                if step == .needMore { break }
                steps.append(step)
                if case .reply = step { continue }
                return steps
            }
        }
        return steps
    }

    @Test func aConnectByNameWithoutAuthenticationInAnyCut() {
        for piece in [1, 2, 3, 7, Self.byName.count] {
            var machine = SocksHandshake(requiresCredentials: false)
            let steps = Self.steps(&machine, Self.byName, piece: piece)
            #expect(steps == [.reply([0x05, 0x00]), .connect(host: "example.org", port: 443)], "piece \(piece)")
        }
    }

    @Test func addressesAreWrittenAsText() {
        var v4 = SocksHandshake(requiresCredentials: false)
        let ipv4: [UInt8] = [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x01, 127, 0, 0, 1, 0x1F, 0x90]
        #expect(Self.steps(&v4, ipv4, piece: 64).last == .connect(host: "127.0.0.1", port: 8080))
        var v6 = SocksHandshake(requiresCredentials: false)
        let loopback6: [UInt8] = Array(repeating: 0, count: 15) + [1]
        let ipv6: [UInt8] = [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x04] + loopback6 + [0x00, 0x50]
        #expect(Self.steps(&v6, ipv6, piece: 64).last == .connect(host: "::1", port: 80))
    }

    @Test func whatFollowsTheRequestStaysForTheTunnel() {
        var machine = SocksHandshake(requiresCredentials: false)
        var buffer = ByteBuffer(bytes: Self.byName + [0x16, 0x03, 0x01])
        #expect(machine.read(&buffer) == .reply([0x05, 0x00]))
        #expect(machine.read(&buffer) == .connect(host: "example.org", port: 443))
        #expect(buffer.readableBytesView.elementsEqual([0x16, 0x03, 0x01]))
        #expect(machine.read(&buffer) == .needMore)
        #expect(machine.reply(.succeeded) == [0x05, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
    }

    @Test func usersAndPasswordsWhenTheProxyHasUsers() {
        let credentials: [UInt8] = [0x01, 5] + Array("alice".utf8) + [6] + Array("s3cret".utf8)
        let request: [UInt8] = [0x05, 0x01, 0x00, 0x01, 10, 0, 0, 1, 0x00, 0x16]
        for piece in [1, 4, 100] {
            var machine = SocksHandshake(requiresCredentials: true)
            let bytes: [UInt8] = [0x05, 0x02, 0x00, 0x02] + credentials + request
            #expect(
                Self.steps(&machine, Array(bytes.prefix(4 + credentials.count)), piece: piece) == [
                    .reply([0x05, 0x02]), .verify(ProxyCredentials(user: "alice", password: "s3cret")),
                ])
            #expect(machine.credentialsChecked(true) == .reply([0x01, 0x00]))
            var rest = ByteBuffer(bytes: request)
            #expect(machine.read(&rest) == .connect(host: "10.0.0.1", port: 22))
        }
        var wrong = SocksHandshake(requiresCredentials: true)
        _ = Self.steps(&wrong, [0x05, 0x01, 0x02] + credentials, piece: 100)
        #expect(wrong.credentialsChecked(false) == .refuse([0x01, 0x01], reason: "wrong user name or password"))
        var buffer = ByteBuffer(bytes: request)
        #expect(wrong.read(&buffer) == .needMore)
    }

    @Test func aClientWithoutTheMethodTheProxyNeedsIsRefused() {
        var anonymous = SocksHandshake(requiresCredentials: true)
        var buffer = ByteBuffer(bytes: [0x05, 0x01, 0x00])
        guard case .refuse(let reply, let reason) = anonymous.read(&buffer) else {
            Issue.record("a client without username/password was not refused")
            return
        }
        #expect(reply == [0x05, 0xFF])
        #expect(reason.contains("username/password"))
        var gssapiOnly = SocksHandshake(requiresCredentials: false)
        var gssapi = ByteBuffer(bytes: [0x05, 0x01, 0x01])
        guard case .refuse([0x05, 0xFF], _) = gssapiOnly.read(&gssapi) else {
            Issue.record("a client offering GSSAPI only was not refused")
            return
        }
    }

    @Test func otherVersionsCommandsAndAddressTypesGetTheirAnswers() {
        for (first, words) in [
            (UInt8(0x04), "SOCKS4"), (UInt8(ascii: "G"), "HTTP request"), (UInt8(0x00), "first byte 0"),
        ] {
            var machine = SocksHandshake(requiresCredentials: false)
            var buffer = ByteBuffer(bytes: [first, 0x01, 0x00])
            guard case .refuse(nil, let reason) = machine.read(&buffer) else {
                Issue.record("version \(first) was not refused without a reply")
                continue
            }
            #expect(reason.contains(words), "\(reason)")
        }
        let cases: [([UInt8], SocksHandshake.ReplyCode, String)] = [
            ([0x05, 0x02, 0x00, 0x01, 127, 0, 0, 1, 0, 80], .commandNotSupported, "BIND"),
            ([0x05, 0x03, 0x00, 0x01, 127, 0, 0, 1, 0, 53], .commandNotSupported, "UDP ASSOCIATE"),
            ([0x05, 0x01, 0x00, 0x09, 127, 0, 0, 1, 0, 80], .addressTypeNotSupported, "address type 9"),
            ([0x05, 0x01, 0x00, 0x03, 3, UInt8(ascii: "a"), 0x0A, UInt8(ascii: "b"), 0, 80], .generalFailure, "bytes"),
            ([0x05, 0x01, 0x00, 0x03, 0, 0, 80], .generalFailure, "bytes"),
            ([0x05, 0x01, 0x00, 0x01, 127, 0, 0, 1, 0, 0], .generalFailure, "port is 0"),
        ]
        for (request, code, words) in cases {
            var machine = SocksHandshake(requiresCredentials: false)
            var buffer = ByteBuffer(bytes: [0x05, 0x01, 0x00] + request)
            #expect(machine.read(&buffer) == .reply([0x05, 0x00]))
            guard case .refuse(let reply, let reason) = machine.read(&buffer) else {
                Issue.record("\(request) was not refused")
                continue
            }
            #expect(reply == SocksHandshake.reply(code), "\(request)")
            #expect(reason.contains(words), "\(reason)")
        }
    }

    @Test func failuresToConnectMapToTheirReplyCodes() {
        let cases: [(TaskFailure, SocksHandshake.ReplyCode)] = [
            (.connectionRefused("no"), .connectionRefused), (.dnsFailure("no"), .hostUnreachable),
            (.unreachable("no"), .networkUnreachable), (.connectTimeout("no"), .ttlExpired),
            (.destinationDenied("no"), .notAllowed), (.upstreamBroken("no"), .generalFailure),
        ]
        for (failure, code) in cases {
            #expect(SocksHandshake.ReplyCode(failure) == code, "\(failure.code)")
        }
    }
}

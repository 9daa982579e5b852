import FoundationEssentials
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SwiftASN1
import Testing
import X509
import _CryptoExtras

@testable import AFProxyTLS

/// The leaves: they chain to the CA for the name asked, an address gets an IP SAN, the cache
/// keeps its bound, and a real client's handshake gets the SNI name's leaf and h2 when it offers
/// it, http/1.1 when it offers only that.
@Suite struct InterceptTLSTests {
    let ca: CertificateAuthority
    let minter: LeafMinter

    init() throws {
        self.ca = try CertificateAuthority.make(certificatePath: "/nonexistent")
        self.minter = try LeafMinter(authority: self.ca)
    }

    func verify(_ leaf: Certificate, hostname: String?, ip: String?) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore([self.ca.certificate])) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: hostname, serverIP: ip)
        }
        if case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore()) {
            return true
        }
        return false
    }

    @Test func aLeafChainsToTheCAForItsNameOnly() async throws {
        let (leaf, _) = try self.minter.mint(HostName("Example.TEST."))
        #expect(await self.verify(leaf, hostname: "example.test", ip: nil))
        #expect(await !self.verify(leaf, hostname: "other.test", ip: nil))
        let other = try CertificateAuthority.make(certificatePath: "/nonexistent")
        var stranger = Verifier(rootCertificates: CertificateStore([other.certificate])) {
            RFC5280Policy()
        }
        guard case .couldNotValidate = await stranger.validate(leaf: leaf, intermediates: CertificateStore()) else {
            Issue.record("a leaf chained to a CA that did not sign it")
            return
        }
        #expect(try leaf.extensions.extendedKeyUsage == ExtendedKeyUsage([.serverAuth]))
        #expect(try leaf.extensions.keyUsage == KeyUsage(digitalSignature: true))
        #expect(leaf.extensions.first { $0.oid == .X509ExtensionID.keyUsage }?.critical == true)
        #expect(
            try leaf.extensions.authorityKeyIdentifier?.keyIdentifier
                == self.ca.certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
        let lifetime = leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore)
        #expect(lifetime <= 398 * 86_400 && leaf.notValidBefore < Date() - 3600)
        #expect(leaf.notValidAfter <= self.ca.certificate.notValidAfter)
    }

    @Test func anAddressGetsAnIPSAN() async throws {
        let (v4, _) = try self.minter.mint(HostName("127.0.0.1"))
        #expect(
            try v4.extensions.subjectAlternativeNames
                == SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]))
        #expect(await self.verify(v4, hostname: nil, ip: "127.0.0.1"))
        let (v6, _) = try self.minter.mint(HostName("[::1]"))
        #expect(await self.verify(v6, hostname: nil, ip: "::1"))
    }

    @Test func theLeafCacheKeepsItsBoundDroppingTheLeastRecentlyUsed() throws {
        let tls = InterceptTLS(minter: self.minter, leafCapacity: 3)
        let a = try tls.leaves.certificate(for: HostName("a.test"))
        _ = try tls.leaves.certificate(for: HostName("b.test"))
        _ = try tls.leaves.certificate(for: HostName("c.test"))
        #expect(try tls.leaves.certificate(for: HostName("A.test")) === a)  // a is used again: b is the oldest
        _ = try tls.leaves.certificate(for: HostName("d.test"))
        #expect(tls.leaves.count == 3)
        #expect(tls.leaves.contains("a.test") && !tls.leaves.contains("b.test") && tls.leaves.contains("d.test"))
        #expect(InterceptTLS.leafCapacity == 1000)
    }

    @Test func rsaLeavesComeOnceTheirKeyIsMadeAndAreCachedApart() async throws {
        let tls = InterceptTLS(minter: self.minter)
        #expect(tls.isReady(for: .ecdsa) && !tls.isReady(for: .rsa))
        #expect(throws: CertificateAuthorityError.self) { try tls.makeServerHandler(connectHost: "a.test", kind: .rsa) }
        try tls.prepare(.rsa)
        #expect(tls.isReady(for: .rsa))
        let rsa = try #require(tls.rsa)
        let leaf = try rsa.minter.mint(HostName("a.test")).0
        #expect(_RSA.Signing.PublicKey(leaf.publicKey) != nil)
        #expect(try leaf.extensions.keyUsage == KeyUsage(digitalSignature: true, keyEncipherment: true))
        #expect(await self.verify(leaf, hostname: "a.test", ip: nil))
        // One cache per kind: the same name has a leaf of each, each kept.
        let cachedRSA = try rsa.certificate(for: HostName("a.test"))
        let cachedECDSA = try tls.leaves.certificate(for: HostName("a.test"))
        #expect(cachedRSA !== cachedECDSA)
        #expect(try rsa.certificate(for: HostName("a.test")) === cachedRSA)
        #expect(rsa.count == 1 && tls.leaves.count == 1)
        _ = try tls.makeServerHandler(connectHost: "a.test", kind: .rsa)
        _ = try tls.makeServerHandler(connectHost: "a.test", kind: .ecdsa)
    }

    /// A real handshake over loopback, with a NIOSSL client trusting only the CA: what it was
    /// served, and the protocol ALPN settled on.
    func handshake(
        connectHost: String, sni: String?, offering protocols: [String]
    ) async throws -> (
        Certificate, String?
    ) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let tls = InterceptTLS(minter: self.minter)
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: try self.ca.certificateDER, format: .der)
        ])
        configuration.applicationProtocols = protocols
        if sni == nil { configuration.certificateVerification = .noHostnameVerification }
        let context = try NIOSSLContext(configuration: configuration)
        let done = group.next().makePromise(of: HandshakeWatcher.Outcome.self)
        let outcome: Result<HandshakeWatcher.Outcome, any Error>
        do {
            let server = try await ServerBootstrap(group: group)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(tls.makeServerHandler(connectHost: connectHost))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            let client = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: context, serverHostname: sni))
                        try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(done: done))
                    }
                }
                .connect(host: "127.0.0.1", port: server.localAddress!.port!).get()
            do {
                outcome = .success(try await done.futureResult.get())
            } catch {
                outcome = .failure(error)
            }
            try? await client.close()
            try? await server.close()
        } catch {
            done.fail(error)
            outcome = .failure(error)
        }
        try await group.shutdownGracefully()
        let (der, negotiated) = try outcome.get()
        return (try Certificate(derEncoded: der), negotiated)
    }

    @Test func aClientGetsTheLeafOfItsSNINameAndH2() async throws {
        let (leaf, negotiated) = try await self.handshake(
            connectHost: "connect.test", sni: "sni.test", offering: ["h2", "http/1.1"])
        #expect(try leaf.extensions.subjectAlternativeNames == SubjectAlternativeNames([.dnsName("sni.test")]))
        #expect(negotiated == "h2")
    }

    @Test func aClientWithoutSNIGetsTheLeafOfTheConnectHost() async throws {
        let (leaf, negotiated) = try await self.handshake(
            connectHost: "127.0.0.1", sni: nil, offering: ["http/1.1"])
        #expect(negotiated == "http/1.1")
        #expect(
            try leaf.extensions.subjectAlternativeNames
                == SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]))
    }
}

/// Fulfils `done` with what the server presented and the ALPN protocol when the client's
/// handshake completes, or fails it.
final class HandshakeWatcher: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias Outcome = (certificate: [UInt8], negotiated: String?)
    let done: EventLoopPromise<Outcome>

    init(done: EventLoopPromise<Outcome>) { self.done = done }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiated) = event as? TLSUserEvent {
            do {
                let handler = try context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
                guard let peer = handler.peerCertificate else { throw ChannelError.inappropriateOperationForState }
                self.done.succeed((try peer.toDERBytes(), negotiated))
            } catch {
                self.done.fail(error)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.done.fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.done.fail(ChannelError.eof)
    }
}

import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// The TLS server side of intercepted connections, for one CA: a leaf per name the clients ask
/// for, minted on first use (an ECDSA signature, a fraction of a millisecond: done on the event
/// loop) and kept, at most `leafCapacity` of them per key kind. Leaves carry a P-256 key; a
/// client whose hello offers no ECDSA gets one with an RSA key, whose generation (once, on the
/// first such client) is the one slow step and runs off the event loops (`prepare`).
package final class InterceptTLS: Sendable {
    package static let leafCapacity = 1000
    /// A context per CONNECT host and key kind (its leaf is the fallback for a client that sends
    /// no SNI): fewer than leaves, since each holds a whole SSL_CTX, and rebuilt cheaply when evicted.
    static let contextCapacity = 128

    let leaves: Leaves
    private let rsaLeaves = NIOLockedValueBox<Leaves?>(nil)
    private let leafCapacity: Int
    private let contexts = NIOLockedValueBox(LeafCache<NIOSSLContext>(capacity: InterceptTLS.contextCapacity))

    init(minter: LeafMinter, leafCapacity: Int = InterceptTLS.leafCapacity) {
        self.leaves = Leaves(minter: minter, capacity: leafCapacity)
        self.leafCapacity = leafCapacity
    }

    /// Whether leaves of `kind` can be minted now, on the event loop.
    package func isReady(for kind: LeafKeyKind) -> Bool {
        kind == .ecdsa || self.rsaLeaves.withLockedValue { $0 != nil }
    }

    /// Makes the key of `kind`'s leaves if it is not made yet. Blocking (RSA key generation):
    /// call it off the event loops.
    package func prepare(_ kind: LeafKeyKind) throws {
        guard !self.isReady(for: kind) else { return }
        let minter = self.leaves.minter.with(try LeafKey.rsa())
        let capacity = self.leafCapacity
        self.rsaLeaves.withLockedValue { if $0 == nil { $0 = Leaves(minter: minter, capacity: capacity) } }
    }

    /// A handler that answers the client's handshake with a leaf certificate of `kind` for the
    /// SNI name the client sent, or for `connectHost` when it sent none (an IP SAN when it is an
    /// address). ALPN offers h2 and http/1.1, h2 first: the listener speaks both to clients, and
    /// a client that offers only http/1.1 (or no ALPN) gets HTTP/1.1 as before. Throws for RSA
    /// before `prepare(.rsa)`.
    package func makeServerHandler(connectHost: String, kind: LeafKeyKind = .ecdsa) throws -> NIOSSLServerHandler {
        let host = HostName(connectHost)
        let contextKey = "\(kind.rawValue) \(host.key)"
        if let context = self.contexts.withLockedValue({ $0.value(for: contextKey) }) {
            return NIOSSLServerHandler(context: context)
        }
        let leaves: Leaves
        switch kind {
        case .ecdsa: leaves = self.leaves
        case .rsa:
            guard let rsa = self.rsaLeaves.withLockedValue({ $0 }) else {
                throw CertificateAuthorityError("the RSA key of the leaves is not made yet")
            }
            leaves = rsa
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try leaves.certificate(for: host))],
            privateKey: .privateKey(leaves.minter.privateKey))
        configuration.applicationProtocols = ["h2", "http/1.1"]
        // NIOSSL's server default still admits TLS 1.0; no client that can trust a local CA needs it.
        configuration.minimumTLSVersion = .tlsv12
        configuration.sslContextCallback = { values, promise in
            guard let sent = values.serverHostname.map(HostName.init), sent != host else {
                return promise.succeed(.noChanges)
            }
            do {
                var override = NIOSSLContextConfigurationOverride()
                override.certificateChain = [.certificate(try leaves.certificate(for: sent))]
                promise.succeed(override)
            } catch {
                promise.fail(error)
            }
        }
        let context = try NIOSSLContext(configuration: configuration)
        self.contexts.withLockedValue { $0.insert(context, for: contextKey) }
        return NIOSSLServerHandler(context: context)
    }

    /// The RSA leaves, once their key is made.
    var rsa: Leaves? { self.rsaLeaves.withLockedValue { $0 } }

    /// The leaves minted so far, by name; a class so the contexts' callbacks can share it
    /// without holding the `InterceptTLS` that holds them.
    final class Leaves: Sendable {
        let minter: LeafMinter
        private let cache: NIOLockedValueBox<LeafCache<NIOSSLCertificate>>

        init(minter: LeafMinter, capacity: Int) {
            self.minter = minter
            self.cache = NIOLockedValueBox(LeafCache(capacity: capacity))
        }

        func certificate(for name: HostName) throws -> NIOSSLCertificate {
            if let leaf = self.cache.withLockedValue({ $0.value(for: name.key) }) { return leaf }
            let leaf = try self.minter.mint(name).1
            self.cache.withLockedValue { $0.insert(leaf, for: name.key) }
            return leaf
        }

        var count: Int { self.cache.withLockedValue { $0.count } }
        func contains(_ name: String) -> Bool { self.cache.withLockedValue { $0.contains(HostName(name).key) } }
    }
}

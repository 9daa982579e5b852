import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// The TLS server side of intercepted connections, for one CA: a leaf per name the clients ask
/// for, minted on first use (an ECDSA signature, a fraction of a millisecond: done on the event
/// loop) and kept, at most `leafCapacity` of them.
package final class InterceptTLS: Sendable {
    package static let leafCapacity = 1000
    /// A context per CONNECT host (its leaf is the fallback for a client that sends no SNI):
    /// fewer than leaves, since each holds a whole SSL_CTX, and rebuilt cheaply when evicted.
    static let contextCapacity = 128

    let leaves: Leaves
    private let contexts = NIOLockedValueBox(LeafCache<NIOSSLContext>(capacity: InterceptTLS.contextCapacity))

    init(minter: LeafMinter, leafCapacity: Int = InterceptTLS.leafCapacity) {
        self.leaves = Leaves(minter: minter, capacity: leafCapacity)
    }

    /// A handler that answers the client's handshake with a leaf certificate for the SNI name the
    /// client sent, or for `connectHost` when it sent none (an IP SAN when it is an address);
    /// ALPN offers only http/1.1, the one version the listener speaks to clients.
    package func makeServerHandler(connectHost: String) throws -> NIOSSLServerHandler {
        let host = HostName(connectHost)
        if let context = self.contexts.withLockedValue({ $0.value(for: host.key) }) {
            return NIOSSLServerHandler(context: context)
        }
        let leaves = self.leaves
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try leaves.certificate(for: host))],
            privateKey: .privateKey(leaves.minter.privateKey))
        configuration.applicationProtocols = ["http/1.1"]
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
        self.contexts.withLockedValue { $0.insert(context, for: host.key) }
        return NIOSSLServerHandler(context: context)
    }

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

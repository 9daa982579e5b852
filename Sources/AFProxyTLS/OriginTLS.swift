import AFProxyModel
import Crypto
import FoundationEssentials
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import NIOTLS

#if canImport(Glibc)
import Glibc
#endif

/// The TLS client side of a tunnel to an origin (a `wss://` handshake read inside an intercepted
/// connection), verified as curl verifies an intercepted request: the system's CAs and
/// `tls-ca-file`, the name, the host's pins; with standalone pins, the pins alone. No byte of the
/// relay passes before the handshake and these checks succeeded (`TLSHandshakeWait`).
package final class OriginTLS: Sendable {
    /// One context per CA file and mode (verified, or pins alone): making one loads the system's
    /// CA store (milliseconds), so each is made once and kept; there are a handful.
    private let contexts = NIOLockedValueBox([String: NIOSSLContext]())

    package init() {}

    /// On the connection's event loop: the TLS handler for `host` (and a pin check after it).
    package func handlers(
        host: String, caFile: String?, pins: [String], pinsStandalone: Bool
    ) throws
        -> [any ChannelHandler]
    {
        // Standalone pins: no chain to verify, the key checked after the handshake decides (a
        // verify callback could only fail as "did not verify", not as a pin mismatch).
        let context = try self.context(caFile: caFile, verifies: !pinsStandalone)
        // An address is checked against the certificate's IP SANs through the socket's address;
        // SNI carries names only.
        let serverName = Self.isAddress(host) ? nil : host
        let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
        return pins.isEmpty ? [handler] : [handler, OriginPinCheck(host: host, pins: pins)]
    }

    /// What the stream task records for a handshake that failed with `error`: the code an
    /// intercepted request's curl transfer records for the same cause.
    package static func failure(for error: any Error, host: String) -> TaskFailure {
        if let mismatch = error as? OriginPinCheck.Mismatch { return .tlsPinMismatch(mismatch.message) }
        let text = "\(error)"
        if error is NIOSSLExtraError || text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("verify") {
            return .tlsVerifyFailed("the TLS certificate of \(host) did not verify: \(text)")
        }
        return .tlsFailure("the TLS handshake with \(host) failed: \(text)")
    }

    private func context(caFile: String?, verifies: Bool) throws -> NIOSSLContext {
        let key = (verifies ? "v:" : "p:") + (caFile ?? "")
        if let context = self.contexts.withLockedValue({ $0[key] }) { return context }
        var configuration = TLSConfiguration.makeClientConfiguration()
        if !verifies { configuration.certificateVerification = .none }
        // A WebSocket handshake is HTTP/1.1 (RFC 6455 §4.1).
        configuration.applicationProtocols = ["http/1.1"]
        if let caFile { configuration.additionalTrustRoots = [.file(caFile)] }
        let context = try NIOSSLContext(configuration: configuration)
        self.contexts.withLockedValue { $0[key] = context }
        return context
    }

    private static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}

/// After a verified handshake, the origin's public key must match one of its host's pins
/// (`sha256//BASE64` of the SubjectPublicKeyInfo, as curl's `PINNEDPUBLICKEY`); otherwise the
/// connection fails before the handshake's completion reaches anyone behind it.
final class OriginPinCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    struct Mismatch: Error {
        var message: String
    }

    private let host: String
    private let pins: [String]

    init(host: String, pins: [String]) {
        self.host = host
        self.pins = pins
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .some(.handshakeCompleted) = event as? TLSUserEvent else {
            return context.fireUserInboundEventTriggered(event)
        }
        let handler = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
        guard Self.matches(handler?.peerCertificate, pins: self.pins) else {
            context.fireErrorCaught(Mismatch(message: "the public key of \(self.host) matches none of its pins"))
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    static func matches(_ certificate: NIOSSLCertificate?, pins: [String]) -> Bool {
        guard let key = try? certificate?.extractPublicKey().toSPKIBytes() else { return false }
        let pin = "sha256//" + Data(SHA256.hash(data: key)).base64EncodedString()
        return pins.contains(pin)
    }
}

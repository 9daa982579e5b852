import AFProxyManager
import AFProxyModel
import NIOCore
import NIOTLS

/// Right behind the TLS handler of an intercepted connection until its handshake ends: records
/// on the stream task how long the client's handshake took, or why it failed (the alert the
/// client sent when it refused the certificate, bytes that are not TLS, a client that stalled
/// past `timeout`), and on a refusal asks for the host to be passed through.
final class ClientHandshakeWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let task: StreamTask
    private let timeout: TimeAmount
    private let refused: (String) -> Bool
    private let started = NIODeadline.now()
    private var timer: Scheduled<Void>?
    private var done = false

    /// `refused`: called with the reason when the client refused the certificate; answers
    /// whether the host is passed through from now on.
    init(task: StreamTask, timeout: TimeAmount, refused: @escaping (String) -> Bool) {
        self.task = task
        self.timeout = timeout
        self.refused = refused
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let seconds = self.timeout.nanoseconds / 1_000_000_000
        self.timer = context.eventLoop.scheduleTask(in: self.timeout) {
            let (watch, context) = bound.value
            watch.fail(.clientTLSFailed("the client did not complete its TLS handshake within \(seconds) s"), context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.timer?.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.handshakeCompleted) = event as? TLSUserEvent, !self.done {
            self.done = true
            self.timer?.cancel()
            let elapsed = NIODeadline.now() - self.started
            self.task.clientHandshakeCompleted(milliseconds: Double(elapsed.nanoseconds) / 1_000_000)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !self.done else { return context.fireErrorCaught(error) }
        self.conclude(Self.verdict(afterCertificate: self.task.bytesDown > 0, error), context)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !self.done {
            let verdict: (message: String, certificateAlert: String?) =
                self.task.bytesDown > 0
                ? (
                    Self.silentRefusal("closed its connection"),
                    "the client closed its connection after afproxy's certificate"
                )
                : ("the client closed its connection during the TLS handshake", nil)
            self.conclude(verdict, context)
        }
        context.fireChannelInactive()
    }

    private func conclude(_ verdict: (message: String, certificateAlert: String?), _ context: ChannelHandlerContext) {
        var message = verdict.message
        if let alert = verdict.certificateAlert, self.refused(alert) {
            message += "; the host is passed through as a plain tunnel for a while (intercept-auto-passthrough)"
        }
        self.fail(.clientTLSFailed(message), context)
    }

    private func fail(_ failure: TaskFailure, _ context: ChannelHandlerContext) {
        guard !self.done else { return }
        self.done = true
        self.timer?.cancel()
        self.task.clientHandshakeFailed(failure)
    }

    /// What a failed handshake says for a person, and why the client refused the certificate
    /// if that is why it failed. `afterCertificate`: afproxy had answered the client's hello
    /// (its certificate was on the way) when the handshake failed.
    static func verdict(afterCertificate: Bool, _ error: any Error) -> (message: String, certificateAlert: String?) {
        let text = "\(error)"
        if let alert = Self.alert(in: text) {
            let message =
                "the client refused afproxy's certificate (TLS alert \(alert)): it does not trust the local CA"
            return Self.certificateAlerts.contains(alert)
                ? (message, "the client sent TLS alert \(alert)")
                : ("the client ended the TLS handshake with alert \(alert)", nil)
        }
        if text.contains("HTTP_REQUEST") || text.contains("HTTPS_PROXY_REQUEST") {
            return ("the client spoke plain HTTP after its CONNECT to an intercepted host, not TLS", nil)
        }
        let reason = Self.reason(in: text)
        // A TLS 1.3 client that rejects the server's certificate sends its alert before it has
        // keys to encrypt it with, and BoringSSL, which expects an encrypted record by then,
        // reports a bad record instead (OpenSSL's clients, Python's and curl among them, do so).
        if afterCertificate, Self.undecryptable.contains(reason) {
            return (
                Self.silentRefusal("sent an alert afproxy cannot read (\(reason))"),
                "the client ended the handshake after afproxy's certificate"
            )
        }
        return ("the client sent bytes that are not a TLS handshake (\(reason))", nil)
    }

    /// A client that ended the handshake right after afproxy's certificate without a readable
    /// reason: most often it does not trust the local CA.
    private static func silentRefusal(_ what: String) -> String {
        "the client \(what) after afproxy's certificate: most likely it does not trust the local CA"
    }

    /// BoringSSL's reasons for a record it cannot read where an encrypted one was due.
    static let undecryptable: Set<String> = [
        "BAD_PACKET_LENGTH", "DECRYPTION_FAILED_OR_BAD_RECORD_MAC", "WRONG_VERSION_NUMBER", "UNEXPECTED_RECORD",
    ]

    /// BoringSSL's reason code in its error text (`…:OPENSSL_internal:WRONG_VERSION_NUMBER`).
    private static func reason(in text: String) -> String {
        guard let range = text.firstRange(of: "OPENSSL_internal:") else { return String(text.prefix(120)) }
        return String(text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    }

    /// The alert name in BoringSSL's error text (`…:TLSV1_ALERT_UNKNOWN_CA`), lower-case.
    private static func alert(in text: String) -> String? {
        guard let range = text.firstRange(of: "ALERT_") else { return nil }
        let name = text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return name.isEmpty ? nil : name.lowercased()
    }

    /// Alerts a client sends when it does not accept the certificate it was shown.
    static let certificateAlerts: Set<String> = [
        "unknown_ca", "bad_certificate", "certificate_unknown", "unsupported_certificate", "certificate_revoked",
        "certificate_expired", "access_denied", "decrypt_error",
    ]
}

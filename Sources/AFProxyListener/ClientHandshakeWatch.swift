import AFProxyManager
import AFProxyModel
import NIOCore
import NIOSSL
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
        let verdict = Self.verdict(error)
        var message = verdict.message
        if let alert = verdict.certificateAlert, self.refused(alert) {
            message += "; the host is passed through as a plain tunnel for a while (intercept-auto-passthrough)"
        }
        self.fail(.clientTLSFailed(message), context)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !self.done {
            self.fail(.clientTLSFailed("the client closed its connection during the TLS handshake"), context)
        }
        context.fireChannelInactive()
    }

    private func fail(_ failure: TaskFailure, _ context: ChannelHandlerContext) {
        guard !self.done else { return }
        self.done = true
        self.timer?.cancel()
        self.task.clientHandshakeFailed(failure)
    }

    /// What a failed handshake says for a person, and the certificate alert the client sent, if
    /// that is why it failed.
    static func verdict(_ error: any Error) -> (message: String, certificateAlert: String?) {
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
        if text.contains("WRONG_VERSION_NUMBER") || text.contains("UNKNOWN_PROTOCOL") || text.contains("RECORD") {
            return ("the client sent bytes that are not a TLS handshake", nil)
        }
        return ("the client's TLS handshake failed: \(text.prefix(200))", nil)
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

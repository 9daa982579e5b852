import AFProxyModel
import NIOCore

/// How a client's TLS handshake with afproxy ended when it did not end well: the failure its
/// stream task records and whether the host is passed through, decided from what was sent
/// (`HandshakeRecords`) and BoringSSL's error. A plain value, so every case is tested without I/O.
///
/// Only what looks like a client refusing afproxy's certificate passes a host through: an alert
/// about the certificate after it was sent passes it through at once; a client that goes away
/// after it without a word (no alert, no request) does so only on a repeat, since one such
/// close may be a client that merely changed its mind. Bytes that never made a ClientHello
/// never pass a host through: any local program could otherwise switch interception off.
struct HandshakeVerdict: Equatable {
    enum Passthrough: Equatable {
        /// Pass the host through now, with this reason.
        case now(String)
        /// Pass it through when this happens again soon (`InterceptRuleSet.clientLikelyRejected`).
        case onRepeat(String)
    }

    var failure: TaskFailure
    var passthrough: Passthrough?

    /// BoringSSL failed the handshake with an error whose text is `error`.
    static func failed(_ records: HandshakeRecords, error: String, host: String) -> HandshakeVerdict {
        if let alert = Self.alert(in: error) ?? records.clientAlert {
            guard records.certificateSent, Self.certificateAlerts.contains(alert) else {
                return .init(failure: .clientTLSFailed("the client ended the TLS handshake with alert \(alert)"))
            }
            return .init(
                failure: .clientTLSFailed(
                    "the client refused afproxy's certificate for \(host) (TLS alert \(alert)): "
                        + "it does not trust the local CA"),
                passthrough: .now("the client sent TLS alert \(alert) after afproxy's certificate"))
        }
        if error.contains("HTTP_REQUEST") || error.contains("HTTPS_PROXY_REQUEST") {
            return .init(
                failure: .clientTLSFailed(
                    "the client spoke plain HTTP after its CONNECT to an intercepted host, not TLS"))
        }
        // swift-nio-ssl's own error for a connection that ended mid-handshake.
        if error.contains("EOF during handshake") { return Self.closed(records, host: host) }
        let reason = Self.reason(in: error)
        if records.certificateSent {
            return .init(
                failure: .clientRejectedCertificate(
                    "the client sent a record afproxy cannot read (\(reason)) after afproxy's certificate for "
                        + "\(host): it may not trust the local CA"),
                passthrough: .onRepeat(Self.silentReason))
        }
        if let hello = records.clientHello {
            let what =
                hello.acceptsECDSA
                ? "the client's TLS handshake failed before afproxy's certificate (\(reason))"
                : "the client offers no cipher suite afproxy's certificate can serve (\(reason))"
            return .init(failure: .clientTLSFailed(what))
        }
        return .init(failure: .clientTLSFailed("the client sent bytes that are not a TLS handshake (\(reason))"))
    }

    /// The client closed its connection before the handshake completed.
    static func closed(_ records: HandshakeRecords, host: String) -> HandshakeVerdict {
        guard records.certificateSent else {
            return .init(failure: .clientTLSFailed("the client closed its connection during the TLS handshake"))
        }
        return .init(
            failure: .clientRejectedCertificate(
                "the client closed its connection right after afproxy's certificate for \(host) without an alert: "
                    + "it may not trust the local CA"),
            passthrough: .onRepeat(Self.silentReason))
    }

    /// The client completed the handshake and closed without sending a request, `after` the
    /// handshake: what a client that pins its server's key does at once. nil past
    /// `silentCloseTime`: a client that closes an unused connection later (a browser's
    /// preconnect gone idle) says nothing about the certificate.
    static func closedAfterHandshake(host: String, after: TimeAmount) -> HandshakeVerdict? {
        guard after < Self.silentCloseTime else { return nil }
        return .init(
            failure: .clientRejectedCertificate(
                "the client completed the TLS handshake for \(host) and closed without a request: "
                    + "it may not trust afproxy's certificate (a pinned key?)"),
            passthrough: .onRepeat(Self.silentReason))
    }

    init(failure: TaskFailure, passthrough: Passthrough? = nil) {
        self.failure = failure
        self.passthrough = passthrough
    }

    static let silentCloseTime = TimeAmount.seconds(2)

    static let silentReason = "clients closed right after afproxy's certificate without an alert or a request"

    /// BoringSSL's reason code in its error text (`…:OPENSSL_internal:WRONG_VERSION_NUMBER`).
    static func reason(in text: String) -> String {
        guard let range = text.firstRange(of: "OPENSSL_internal:") else { return String(text.prefix(120)) }
        return String(text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    }

    /// The alert name in BoringSSL's error text (`…:TLSV1_ALERT_UNKNOWN_CA`), lower-case.
    static func alert(in text: String) -> String? {
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

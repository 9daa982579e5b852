/// Why a task ended without its response, whichever transport carried it: one type for curl's
/// transfers, the tunnels and the task's own verbs, in the manner of async-http-client's
/// `HTTPClientError`. A struct around a private code, so that causes can be added without
/// breaking a caller's `switch`: callers ask for what they need (the HTTP status to answer, the
/// stable code for the record, whether it counts as a failure) rather than matching cases.
package struct TaskFailure: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: String, Sendable, CaseIterable {
        case canceled = "canceled"
        case clientClosed = "client-closed"
        case clientTimeout = "client-timeout"
        case daemonStopping = "daemon-stopping"
        case dnsFailure = "dns-failure"
        case connectionRefused = "connection-refused"
        case unreachable = "unreachable"
        case connectTimeout = "connect-timeout"
        case upstreamTimeout = "upstream-timeout"
        case upstreamBroken = "upstream-broken"
        case badResponse = "upstream-bad-response"
        case tlsFailure = "tls-failure"
        case refusedByPolicy = "refused-by-policy"
        case badRequest = "bad-request"
        case internalError = "internal-error"
        case httpError = "http-error"
        case lengthMismatch = "length-mismatch"
        case checksumMismatch = "checksum-mismatch"
        case diskFull = "disk-full"
        case fileError = "file-error"
        case tlsVerifyFailed = "tls-verify-failed"
        case tlsPinMismatch = "tls-pin-mismatch"
        case destinationDenied = "destination-denied"
        case stalled = "stalled"
        case clientTLSFailed = "client-tls-failed"
        case upstreamProxyUnreachable = "upstream-proxy-unreachable"
        case upstreamProxyAuth = "upstream-proxy-auth"
        case upstreamProxyRefused = "upstream-proxy-refused"
        case clientRejectedCertificate = "client-rejected-certificate"
    }

    private let reason: Code
    /// What happened, in words, for a person: the task's `error` and the body of the answer.
    package let message: String

    private init(_ reason: Code, _ message: String) {
        self.reason = reason
        self.message = message
    }

    package var description: String { self.message }

    /// The stable short name of the cause: the task record's `errorCode`, for logs and scripts.
    package var code: String { self.reason.rawValue }

    /// Every code there is, in the order docs/control-api.md lists them.
    package static var allCodes: [String] { Code.allCases.map(\.rawValue) }

    /// The same cause, told in other words (a download's failure after its last attempt).
    package func withMessage(_ message: String) -> TaskFailure { .init(self.reason, message) }

    /// Whether `self` and `other` have the same cause, whatever their messages say.
    package func hasSameCause(as other: TaskFailure) -> Bool { self.reason == other.reason }

    /// The status the proxy answers the client with when no response had started yet.
    package var httpStatus: Int {
        switch self.reason {
        case .dnsFailure, .connectionRefused, .unreachable, .upstreamBroken, .badResponse, .tlsFailure, .httpError,
            .lengthMismatch, .checksumMismatch, .tlsVerifyFailed, .tlsPinMismatch, .upstreamProxyUnreachable,
            .upstreamProxyAuth, .upstreamProxyRefused:
            502
        case .connectTimeout, .upstreamTimeout: 504
        case .canceled, .clientClosed, .daemonStopping: 503
        case .refusedByPolicy, .destinationDenied: 403
        case .clientTimeout: 408
        case .badRequest: 400
        case .internalError, .fileError, .stalled: 500
        case .clientTLSFailed, .clientRejectedCertificate: 400
        case .diskFull: 507
        }
    }

    /// Ended on purpose (a person canceled, the client went away, the daemon stops), not by a
    /// fault: the completed-task log does not count it as a failure.
    package var isCancellation: Bool {
        switch self.reason {
        case .canceled, .clientClosed, .daemonStopping: true
        default: false
        }
    }

    /// `isCancellation` for a recorded `errorCode`.
    package static func isCancellation(code: String) -> Bool {
        Code(rawValue: code).map { TaskFailure($0, "").isCancellation } ?? false
    }

    // MARK: causes

    /// A person canceled the task.
    package static func canceled(_ message: String = "canceled") -> TaskFailure { .init(.canceled, message) }
    /// The client closed or broke off its connection while the task ran.
    package static func clientClosed(_ message: String) -> TaskFailure { .init(.clientClosed, message) }
    /// The client went silent in the middle of its request body for longer than `body-timeout`.
    package static func clientTimeout(_ message: String) -> TaskFailure { .init(.clientTimeout, message) }
    package static func daemonStopping(_ message: String = "the daemon is stopping") -> TaskFailure {
        .init(.daemonStopping, message)
    }
    package static func dnsFailure(_ message: String) -> TaskFailure { .init(.dnsFailure, message) }
    package static func connectionRefused(_ message: String) -> TaskFailure { .init(.connectionRefused, message) }
    /// No route, host down, network unreachable and every other reason a connect failed.
    package static func unreachable(_ message: String) -> TaskFailure { .init(.unreachable, message) }
    package static func connectTimeout(_ message: String) -> TaskFailure { .init(.connectTimeout, message) }
    /// Connected, and then the upstream went silent for longer than allowed.
    package static func upstreamTimeout(_ message: String) -> TaskFailure { .init(.upstreamTimeout, message) }
    /// The upstream broke the connection off, or closed it before its message was complete.
    package static func upstreamBroken(_ message: String) -> TaskFailure { .init(.upstreamBroken, message) }
    /// The upstream's answer is not HTTP/1.x a proxy may pass on.
    package static func badResponse(_ message: String) -> TaskFailure { .init(.badResponse, message) }
    package static func tlsFailure(_ message: String) -> TaskFailure { .init(.tlsFailure, message) }
    /// A rule of this proxy does not allow the request.
    package static func refusedByPolicy(_ message: String) -> TaskFailure { .init(.refusedByPolicy, message) }
    /// A destination rule (`deny-hosts`, `allow-hosts`, `deny-private-destinations`) refuses the
    /// host or the address it resolved to; the message names the rule.
    package static func destinationDenied(_ message: String) -> TaskFailure { .init(.destinationDenied, message) }
    /// The request cannot be sent upstream as it is (a URL the transport refuses).
    package static func badRequest(_ message: String) -> TaskFailure { .init(.badRequest, message) }
    /// A resource of our own failed (a handle could not be made): a fault of the daemon.
    package static func internalError(_ message: String) -> TaskFailure { .init(.internalError, message) }
    /// The safety net ended a task that had no client and made no progress: a defect of the rule
    /// at `HTTPTaskStateMachine`, which should never leave such a task.
    package static func stalled(_ message: String) -> TaskFailure { .init(.stalled, message) }

    // MARK: causes of download tasks

    /// The origin answered with an error a retry would not change (a 4xx other than 416 and 429).
    package static func httpError(_ message: String) -> TaskFailure { .init(.httpError, message) }
    /// The file came out longer or shorter than the origin announced.
    package static func lengthMismatch(_ message: String) -> TaskFailure { .init(.lengthMismatch, message) }
    /// The complete file's SHA-256 is not the one the download was given.
    package static func checksumMismatch(_ message: String) -> TaskFailure { .init(.checksumMismatch, message) }
    /// No space left for the file (ENOSPC, EDQUOT, or the file size limit).
    package static func diskFull(_ message: String) -> TaskFailure { .init(.diskFull, message) }
    /// Any other failure to write, sync or rename the file.
    package static func fileError(_ message: String) -> TaskFailure { .init(.fileError, message) }

    /// The origin's certificate chain did not verify against the trusted CAs (or its name).
    package static func tlsVerifyFailed(_ message: String) -> TaskFailure { .init(.tlsVerifyFailed, message) }
    /// The origin's key matches none of the pins its host has.
    package static func tlsPinMismatch(_ message: String) -> TaskFailure { .init(.tlsPinMismatch, message) }

    /// The client's side of an intercepted connection did not complete its TLS handshake with
    /// afproxy: it refused the minted certificate (the alert it sent is in the message), spoke
    /// something else than TLS, or stalled.
    package static func clientTLSFailed(_ message: String) -> TaskFailure { .init(.clientTLSFailed, message) }
    /// The client of an intercepted connection went away right after afproxy's certificate
    /// without a word: no alert, no request. What a client that pins its server's key or does
    /// not trust the local CA but sends no alert does; a repeat passes the host through.
    package static func clientRejectedCertificate(_ message: String) -> TaskFailure {
        .init(.clientRejectedCertificate, message)
    }

    // MARK: causes of the upstream proxy (`upstream-proxy`)

    /// The upstream proxy could not be reached (refused, unreachable, its name did not resolve,
    /// or the connect timed out); `afproxyctl status` shows it too.
    package static func upstreamProxyUnreachable(_ message: String) -> TaskFailure {
        .init(.upstreamProxyUnreachable, message)
    }
    /// The upstream proxy asked for credentials (407): none configured, or the ones configured
    /// were refused.
    package static func upstreamProxyAuth(_ message: String) -> TaskFailure { .init(.upstreamProxyAuth, message) }
    /// The upstream proxy refused the tunnel (any answer to CONNECT but 200 and 407, a SOCKS
    /// failure reply) or answered something that is not its protocol.
    package static func upstreamProxyRefused(_ message: String) -> TaskFailure { .init(.upstreamProxyRefused, message) }

    /// A download retries after this failure: the network or the origin may do better next time.
    /// TLS, the request itself, the file and the daemon's own faults would fail the same way again.
    package var isRetryable: Bool {
        switch self.reason {
        case .dnsFailure, .connectionRefused, .unreachable, .connectTimeout, .upstreamTimeout, .upstreamBroken,
            .badResponse, .upstreamProxyUnreachable:
            true
        default: false
        }
    }
}

import CCurl

/// How a transfer ended.
public enum UpstreamResult: Sendable, Equatable {
    case success
    case failure(UpstreamFailure)
}

/// Why a transfer failed, with the HTTP status the proxy answers a client with when no response
/// had started yet. A struct around a kind, so that causes can be added without breaking callers.
public struct UpstreamFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// DNS failure, refused or unreachable: 502.
        case unreachable
        /// Connect or response timeout, or an upstream that went silent: 504.
        case timeout
        /// The upstream broke the protocol or the connection: 502.
        case upstreamBroken
        /// curl would not accept the request (URL it cannot parse): 400.
        case badRequest
        /// Canceled by a person or because the client went away.
        case canceled
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { self.message }

    public var httpStatus: Int {
        switch self.kind {
        case .unreachable, .upstreamBroken: 502
        case .timeout: 504
        case .badRequest: 400
        case .canceled: 503
        }
    }

    /// Maps a curl result code and curl's own error text to a failure.
    static func fromCurl(_ code: CURLcode, detail: String) -> UpstreamFailure {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return UpstreamFailure(.unreachable, "DNS lookup failed: \(text)")
        case CURLE_COULDNT_CONNECT:
            return UpstreamFailure(.unreachable, "connection to upstream failed: \(text)")
        case CURLE_OPERATION_TIMEDOUT:
            return UpstreamFailure(.timeout, "upstream timed out: \(text)")
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return UpstreamFailure(.badRequest, "request URL refused: \(text)")
        case CURLE_GOT_NOTHING:
            return UpstreamFailure(.upstreamBroken, "upstream closed the connection without a response")
        case CURLE_PARTIAL_FILE:
            return UpstreamFailure(.upstreamBroken, "upstream closed the connection before the body was complete: \(text)")
        default:
            return UpstreamFailure(.upstreamBroken, "upstream failed: \(text)")
        }
    }
}

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
        /// The upstream broke the connection: 502.
        case upstreamBroken
        /// The upstream's response is not HTTP/1.x a proxy may pass on (malformed head, invalid
        /// or conflicting framing, another protocol): 502.
        case badResponse
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

    /// A stable name for the kind, for the task's record, logs and scripts.
    public var code: String {
        switch self.kind {
        case .unreachable: "upstream-unreachable"
        case .timeout: "upstream-timeout"
        case .upstreamBroken: "upstream-broken"
        case .badResponse: "upstream-bad-response"
        case .badRequest: "bad-request"
        case .canceled: "canceled"
        }
    }

    public var httpStatus: Int {
        switch self.kind {
        case .unreachable, .upstreamBroken, .badResponse: 502
        case .timeout: 504
        case .badRequest: 400
        case .canceled: 503
        }
    }

    /// Maps a curl result code and curl's own error text to a failure. `headComplete`: whether the
    /// final response head had arrived.
    static func fromCurl(_ code: CURLcode, detail: String, headComplete: Bool = false) -> UpstreamFailure {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY,
            CURLE_BAD_FUNCTION_ARGUMENT where !headComplete:
            // The request was valid (the validator checked its URL): what curl refused is the
            // answer, an HTTP/0.9 reply, an unknown HTTP/1 version, a head its parser rejects
            // (a first field line that starts with a space).
            // curl's own text for the folded first line is "A libcurl function was given a bad argument".
            let reason = code == CURLE_BAD_FUNCTION_ARGUMENT ? "a head curl cannot parse (a folded first field line?)" : text
            return UpstreamFailure(.badResponse, "upstream sent a response that is not valid HTTP/1.x: \(reason)")
        case CURLE_COULDNT_RESOLVE_HOST:
            return UpstreamFailure(.unreachable, "DNS lookup failed: \(text)")
        case CURLE_COULDNT_CONNECT:
            return UpstreamFailure(.unreachable, "connection to upstream failed: \(text)")
        case CURLE_OPERATION_TIMEDOUT:
            return UpstreamFailure(.timeout, "upstream timed out: \(text)")
        case CURLE_URL_MALFORMAT:
            return UpstreamFailure(.badRequest, "request URL refused: \(text)")
        case CURLE_SEND_FAIL_REWIND:
            return UpstreamFailure(
                .upstreamBroken,
                "the upstream connection broke while the request body was being sent, and what was sent is no longer kept to send again")
        case CURLE_GOT_NOTHING:
            return UpstreamFailure(.upstreamBroken, "upstream closed the connection without a response")
        case CURLE_PARTIAL_FILE:
            return UpstreamFailure(.upstreamBroken, "upstream closed the connection before the body was complete: \(text)")
        default:
            return UpstreamFailure(.upstreamBroken, "upstream failed: \(text)")
        }
    }
}

import AFProxyModel
import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// curl's result codes as the failures a task records: here, in the one module that knows curl,
/// while `UpstreamResult`, which carries them, is the transport seam's (AFProxyTransport).
extension TaskFailure {
    /// What `fromCurl` needs to know of the transfer besides curl's code.
    struct CurlContext {
        /// curl's own error text (its error buffer), empty when it wrote none.
        var detail = ""
        /// The final response head had arrived.
        var headComplete = false
        /// A connection to the origin was open (a timeout then is the origin's silence).
        var connected = false
        /// The errno of the last failed socket call (CURLINFO_OS_ERRNO), 0 when none.
        var osErrno: Int32 = 0
        /// The origin's host, for messages that name it.
        var host: String?
    }

    /// Maps a curl result code to the failure it means.
    static func fromCurl(_ code: CURLcode, _ context: CurlContext = .init()) -> TaskFailure {
        let text = context.detail.isEmpty ? String(cString: curl_easy_strerror(code)) : context.detail
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY,
            CURLE_BAD_FUNCTION_ARGUMENT where !context.headComplete:
            // The request was valid (the validator checked its URL): what curl refused is the
            // answer, an HTTP/0.9 reply, an unknown HTTP/1 version, a head its parser rejects
            // (a first field line that starts with a space, for which curl's own text is "A
            // libcurl function was given a bad argument").
            let reason =
                code == CURLE_BAD_FUNCTION_ARGUMENT ? "a head curl cannot parse (a folded first field line?)" : text
            return .badResponse("upstream sent a response that is not valid HTTP/1.x: \(reason)")
        case CURLE_COULDNT_RESOLVE_HOST:
            return .dnsFailure("DNS lookup failed: \(text)")
        case CURLE_COULDNT_CONNECT where context.osErrno == ECONNREFUSED:
            return .connectionRefused("connection to upstream failed: \(text)")
        case CURLE_COULDNT_CONNECT:
            return .unreachable("connection to upstream failed: \(text)")
        case CURLE_OPERATION_TIMEDOUT where context.connected:
            return .upstreamTimeout("upstream timed out: \(text)")
        case CURLE_OPERATION_TIMEDOUT:
            return .connectTimeout("upstream timed out: \(text)")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR:
            return .tlsVerifyFailed("the TLS certificate of \(context.host ?? "upstream") did not verify: \(text)")
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .tlsPinMismatch(
                "the public key of \(context.host ?? "upstream") matches none of its pins (afproxyctl pin shows the one it has)"
            )
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE:
            return .tlsFailure("TLS with upstream failed: \(text)")
        case CURLE_TOO_MANY_REDIRECTS:
            // curl's text counts one handle's redirects, and a reroute starts a handle anew: the
            // limit is the download's. A loop would answer the same on every attempt.
            return .httpError("more than \(UpstreamTransfer.redirectLimit) redirects (a loop?)")
        case CURLE_URL_MALFORMAT:
            return .badRequest("request URL refused: \(text)")
        case CURLE_FAILED_INIT:
            return .internalError("curl failed: \(text)")
        case CURLE_SEND_FAIL_REWIND:
            return .upstreamBroken(
                "the upstream connection broke while the request body was being sent, and what was sent is no longer kept to send again"
            )
        case CURLE_GOT_NOTHING:
            return .upstreamBroken("upstream closed the connection without a response")
        case CURLE_PARTIAL_FILE:
            return .upstreamBroken("upstream closed the connection before the body was complete: \(text)")
        default:
            return .upstreamBroken("upstream failed: \(text)")
        }
    }
}

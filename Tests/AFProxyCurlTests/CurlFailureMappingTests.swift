import AFProxyModel
import CCurl
import Testing

@testable import AFProxyCurl

#if canImport(Glibc)
import Glibc
#endif

/// curl's result codes, and what it knows besides, become the causes the task records.
struct CurlFailureMappingTests {
    private func code(_ curl: CURLcode, _ context: TaskFailure.CurlContext = .init()) -> String {
        TaskFailure.fromCurl(curl, context).code
    }

    @Test func refusalsOfTheAnswerAreBadResponses() {
        #expect(self.code(CURLE_UNSUPPORTED_PROTOCOL, .init(detail: "Received HTTP/0.9")) == "upstream-bad-response")
        #expect(self.code(CURLE_WEIRD_SERVER_REPLY) == "upstream-bad-response")
        #expect(self.code(CURLE_BAD_FUNCTION_ARGUMENT) == "upstream-bad-response")
        #expect(self.code(CURLE_BAD_FUNCTION_ARGUMENT, .init(headComplete: true)) == "upstream-broken")
    }

    @Test func aRedirectLoopIsNotRetried() {
        let failure = TaskFailure.fromCurl(CURLE_TOO_MANY_REDIRECTS, .init(detail: "Maximum (0) redirects followed"))
        #expect(failure.code == "http-error")
        #expect(!failure.isRetryable)
        #expect(failure.message == "more than 10 redirects (a loop?)")
    }

    @Test func connectFailuresSaySeparatelyRefusedUnreachableAndTimedOut() {
        #expect(self.code(CURLE_COULDNT_RESOLVE_HOST) == "dns-failure")
        #expect(self.code(CURLE_COULDNT_CONNECT, .init(osErrno: ECONNREFUSED)) == "connection-refused")
        #expect(self.code(CURLE_COULDNT_CONNECT, .init(osErrno: EHOSTUNREACH)) == "unreachable")
        #expect(self.code(CURLE_OPERATION_TIMEDOUT) == "connect-timeout")
        #expect(self.code(CURLE_OPERATION_TIMEDOUT, .init(connected: true)) == "upstream-timeout")
    }

    @Test func verificationAndPinsHaveCodesOfTheirOwnThatNameTheHost() {
        let verify = TaskFailure.fromCurl(
            CURLE_PEER_FAILED_VERIFICATION, .init(detail: "SSL certificate problem: self-signed", host: "h.example"))
        #expect(verify.code == "tls-verify-failed")
        #expect(
            verify.message == "the TLS certificate of h.example did not verify: SSL certificate problem: self-signed")
        let pin = TaskFailure.fromCurl(CURLE_SSL_PINNEDPUBKEYNOTMATCH, .init(host: "h.example"))
        #expect(pin.code == "tls-pin-mismatch")
        #expect(pin.message.hasPrefix("the public key of h.example matches none of its pins"))
        #expect(!verify.isRetryable && !pin.isRetryable)
    }

    @Test func theRestKeepCurlsTextInTheMessage() {
        #expect(self.code(CURLE_SSL_CONNECT_ERROR) == "tls-failure")
        #expect(self.code(CURLE_URL_MALFORMAT) == "bad-request")
        #expect(self.code(CURLE_PARTIAL_FILE, .init(headComplete: true)) == "upstream-broken")
        #expect(self.code(CURLE_GOT_NOTHING) == "upstream-broken")
        let failure = TaskFailure.fromCurl(CURLE_RECV_ERROR, .init(detail: "Connection reset by peer"))
        #expect(failure.message == "upstream failed: Connection reset by peer")
        #expect(failure.httpStatus == 502)
    }
}

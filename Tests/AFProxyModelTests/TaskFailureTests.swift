import AFProxyModel
import Testing

struct TaskFailureTests {
    @Test func eachCauseHasItsStatusCodeAndWhetherItIsACancel() {
        let cases: [(TaskFailure, Int, String, Bool)] = [
            (.canceled(), 503, "canceled", true),
            (.clientClosed("x"), 503, "client-closed", true),
            (.clientTimeout("x"), 408, "client-timeout", false),
            (.daemonStopping(), 503, "daemon-stopping", true),
            (.dnsFailure("x"), 502, "dns-failure", false),
            (.connectionRefused("x"), 502, "connection-refused", false),
            (.unreachable("x"), 502, "unreachable", false),
            (.connectTimeout("x"), 504, "connect-timeout", false),
            (.upstreamTimeout("x"), 504, "upstream-timeout", false),
            (.upstreamBroken("x"), 502, "upstream-broken", false),
            (.badResponse("x"), 502, "upstream-bad-response", false),
            (.tlsFailure("x"), 502, "tls-failure", false),
            (.refusedByPolicy("x"), 403, "refused-by-policy", false),
            (.badRequest("x"), 400, "bad-request", false),
            (.internalError("x"), 500, "internal-error", false),
            (.httpError("x"), 502, "http-error", false),
            (.lengthMismatch("x"), 502, "length-mismatch", false),
            (.checksumMismatch("x"), 502, "checksum-mismatch", false),
            (.diskFull("x"), 507, "disk-full", false),
            (.fileError("x"), 500, "file-error", false),
            (.tlsVerifyFailed("x"), 502, "tls-verify-failed", false),
            (.tlsPinMismatch("x"), 502, "tls-pin-mismatch", false),
            (.destinationDenied("x is denied by deny-hosts x"), 403, "destination-denied", false),
            (.stalled("x"), 500, "stalled", false),
            (.clientTLSFailed("x"), 400, "client-tls-failed", false),
            (.upstreamProxyUnreachable("x"), 502, "upstream-proxy-unreachable", false),
            (.upstreamProxyAuth("x"), 502, "upstream-proxy-auth", false),
            (.upstreamProxyRefused("x"), 502, "upstream-proxy-refused", false),
            (.clientRejectedCertificate("x"), 400, "client-rejected-certificate", false),
        ]
        for (failure, status, code, cancel) in cases {
            #expect((failure.httpStatus, failure.code, failure.isCancellation) == (status, code, cancel))
            #expect(TaskFailure.isCancellation(code: code) == cancel)
        }
        #expect(cases.map(\.2) == TaskFailure.allCodes)
    }

    @Test func onlyWhatTheNetworkOrTheOriginMayDoBetterIsRetried() {
        let retried = TaskFailure.allCodes.filter { code in
            [
                TaskFailure.dnsFailure("x"), .connectionRefused("x"), .unreachable("x"), .connectTimeout("x"),
                .upstreamTimeout("x"), .upstreamBroken("x"), .badResponse("x"), .tlsFailure("x"), .httpError("x"),
                .diskFull("x"), .canceled(), .upstreamProxyUnreachable("x"), .upstreamProxyAuth("x"),
                .upstreamProxyRefused("x"),
            ].first { $0.code == code }?.isRetryable == true
        }
        #expect(
            retried == [
                "dns-failure", "connection-refused", "unreachable", "connect-timeout", "upstream-timeout",
                "upstream-broken", "upstream-bad-response", "upstream-proxy-unreachable",
            ])
    }

    @Test func theCauseIsComparedApartFromTheMessage() {
        #expect(TaskFailure.canceled().message == "canceled")
        #expect(TaskFailure.dnsFailure("a").hasSameCause(as: .dnsFailure("b")))
        #expect(!TaskFailure.dnsFailure("a").hasSameCause(as: .unreachable("a")))
        #expect(TaskFailure.dnsFailure("a") != TaskFailure.dnsFailure("b"))
    }
}

import AFProxyModel
import Testing

struct TaskFailureTests {
    @Test func eachCauseHasItsStatusCodeAndWhetherItIsACancel() {
        let cases: [(TaskFailure, Int, String, Bool)] = [
            (.canceled(), 503, "canceled", true),
            (.clientClosed("x"), 503, "client-closed", true),
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
        ]
        for (failure, status, code, cancel) in cases {
            #expect((failure.httpStatus, failure.code, failure.isCancellation) == (status, code, cancel))
            #expect(TaskFailure.isCancellation(code: code) == cancel)
        }
        #expect(cases.map(\.2) == TaskFailure.allCodes)
    }

    @Test func theCauseIsComparedApartFromTheMessage() {
        #expect(TaskFailure.canceled().message == "canceled")
        #expect(TaskFailure.dnsFailure("a").hasSameCause(as: .dnsFailure("b")))
        #expect(!TaskFailure.dnsFailure("a").hasSameCause(as: .unreachable("a")))
        #expect(TaskFailure.dnsFailure("a") != TaskFailure.dnsFailure("b"))
    }
}

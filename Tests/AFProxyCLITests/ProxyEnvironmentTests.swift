import Testing

@testable import AFProxyCLI

@Suite struct ProxyEnvironmentTests {
    @Test func exportsEachVariableInLowerAndUpperCase() {
        let lines = ProxyEnvironment(listen: ["127.0.0.1:3128"], noProxy: "")!.lines(fish: false)
        #expect(
            lines == [
                "export http_proxy='http://127.0.0.1:3128'", "export https_proxy='http://127.0.0.1:3128'",
                "export no_proxy=''", "export HTTP_PROXY='http://127.0.0.1:3128'",
                "export HTTPS_PROXY='http://127.0.0.1:3128'", "export NO_PROXY=''",
            ])
    }

    @Test func fishGetsSetGx() {
        let lines = ProxyEnvironment(listen: ["[::1]:8080"], noProxy: "localhost,::1")!.lines(fish: true)
        #expect(lines.first == "set -gx http_proxy 'http://[::1]:8080';")
        #expect(lines.last == "set -gx NO_PROXY 'localhost,::1';")
    }

    @Test func aWildcardAddressIsReachedOverLoopback() {
        #expect(ProxyEnvironment(listen: ["0.0.0.0:3128"], noProxy: "")?.proxyURL == "http://127.0.0.1:3128")
        #expect(ProxyEnvironment(listen: ["[::]:3128", "x:1"], noProxy: "")?.proxyURL == "http://[::1]:3128")
        #expect(ProxyEnvironment(listen: [], noProxy: "") == nil)
    }

    @Test func aQuoteInAValueCannotEndTheShellWord() {
        #expect(ProxyEnvironment.quoted("a'b") == "'a'\\''b'")
    }

    @Test func theSocketFlagOnTheLineBeingCompletedIsUsed() {
        #expect(TaskIDCompletion.socketFlag(in: ["afproxyctl", "--socket", "/s", "suspend", ""]) == "/s")
        #expect(TaskIDCompletion.socketFlag(in: ["afproxyctl", "--socket=/t", "resume"]) == "/t")
        #expect(TaskIDCompletion.socketFlag(in: ["afproxyctl", "suspend", "--socket"]) == nil)
    }
}

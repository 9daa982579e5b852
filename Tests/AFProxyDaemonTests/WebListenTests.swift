import Testing

@testable import AFProxyDaemon

@Suite struct WebListenTests {
    @Test func offByDefaultAndSetFromEverySource() throws {
        #expect(DaemonConfiguration().webListen == nil)
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply("web-listen = 127.0.0.1:3129", path: "c.conf", to: &configuration)
        #expect(configuration.webListen == "127.0.0.1:3129")
        try ConfigurationFile.applyEnvironment(["AFPROXY_WEB_LISTEN": "[::1]:3130"], to: &configuration)
        #expect(configuration.webListen == "[::1]:3130")
        let flag = try AFProxyCommand.parse(["--web", "localhost:0"]).resolve(environment: [:])
        #expect(flag.webListen == "localhost:0")
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("web-listen = 3129", path: "c.conf", to: &configuration)
        }
    }

    /// Each request's Host is checked against the address, and no browser sends a wildcard.
    @Test func refusesAWildcardSayingWhatToNameInstead() {
        for text in ["0.0.0.0:3129", "[::]:3129"] {
            var configuration = DaemonConfiguration()
            #expect {
                try ConfigurationFile.apply("web-listen = \(text)", path: "c.conf", to: &configuration)
            } throws: { error in
                "\(error)".contains("not the wildcard") && "\(error)".contains("127.0.0.1:3129")
            }
        }
    }

    @Test func isReadAtStartOnly() {
        let old = DaemonConfiguration()
        var new = old
        new.webListen = "127.0.0.1:3129"
        #expect(DaemonService.restartOnlyChanges(from: old, to: new, adoptedProxy: false) == ["web-listen"])
    }
}

import Testing

@testable import AFProxyDaemon

@Suite struct MetricsListenTests {
    @Test func offByDefaultAndSetFromEverySource() throws {
        #expect(DaemonConfiguration().metricsListen == nil)
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply("metrics-listen = 127.0.0.1:9128", path: "c.conf", to: &configuration)
        #expect(configuration.metricsListen == "127.0.0.1:9128")
        try ConfigurationFile.applyEnvironment(["AFPROXY_METRICS_LISTEN": "[::1]:9129"], to: &configuration)
        #expect(configuration.metricsListen == "[::1]:9129")
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("metrics-listen = 9128", path: "c.conf", to: &configuration)
        }
    }

    @Test func isReadAtStartOnly() {
        let old = DaemonConfiguration()
        var new = old
        new.metricsListen = "127.0.0.1:9128"
        #expect(DaemonService.restartOnlyChanges(from: old, to: new, adoptedProxy: false) == ["metrics-listen"])
    }
}
